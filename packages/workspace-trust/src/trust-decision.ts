import { type TrustItem, trustItemDigest } from './trust-items.js';
import type { TrustedFolder } from './trust-store.js';

/**
 * How a folder stands: `trusted` (every item was pinned when trusted), `changed` (trusted, but
 * some items are new or differ from what was pinned), `untrusted` (never trusted), or
 * `trusted-by-flag` (the user trusted it for this run, e.g. `--trust`).
 */
export type TrustState = 'trusted' | 'changed' | 'untrusted' | 'trusted-by-flag';

/** Why an item is not applied. */
export type WithheldReason = 'untrusted' | 'new' | 'changed';

/** An item left out, and why. */
export interface WithheldItem {
  item: TrustItem;
  reason: WithheldReason;
}

/** What applies in a folder and what does not. */
export interface TrustDecision {
  state: TrustState;
  /** The stored entry that covers the folder (its own or a trusting ancestor's), if any. */
  entry: TrustedFolder | undefined;
  /** Items that apply: pinned and unchanged, or all of them when trusted by flag. */
  accepted: TrustItem[];
  /** Items that do not apply until the user trusts them. */
  withheld: WithheldItem[];
  /** Keys pinned in the entry that the folder no longer has (nothing to do; for messages). */
  removed: string[];
}

/** Options of {@link decideTrust}. */
export interface DecideTrustOptions {
  /** What the folder's configuration would execute or widen. */
  items: readonly TrustItem[];
  /** The stored entry covering the folder (`TrustStore.entryFor`), if any. */
  entry: TrustedFolder | undefined;
  /** The user trusts the folder for this run whatever is stored (e.g. `--trust`). */
  trustedByFlag?: boolean;
}

/**
 * Decides what of a folder's configuration applies. Nothing of an untrusted folder applies; in a
 * trusted folder an item applies only if it is exactly what was pinned — a new hook or a changed
 * server command waits for the user, while the rest keeps working.
 */
export function decideTrust(options: DecideTrustOptions): TrustDecision {
  const { items, entry } = options;
  const present = new Set(items.map((item) => item.key));
  const removed =
    entry === undefined ? [] : Object.keys(entry.items).filter((key) => !present.has(key));
  if (options.trustedByFlag === true)
    return { state: 'trusted-by-flag', entry, accepted: [...items], withheld: [], removed };
  if (entry === undefined)
    return {
      state: 'untrusted',
      entry,
      accepted: [],
      withheld: items.map((item) => ({ item, reason: 'untrusted' })),
      removed,
    };
  const accepted: TrustItem[] = [];
  const withheld: WithheldItem[] = [];
  for (const item of items) {
    const pinned = Object.hasOwn(entry.items, item.key) ? entry.items[item.key] : undefined;
    if (pinned === undefined) withheld.push({ item, reason: 'new' });
    else if (pinned.digest !== trustItemDigest(item)) withheld.push({ item, reason: 'changed' });
    else accepted.push(item);
  }
  return {
    state: withheld.length === 0 ? 'trusted' : 'changed',
    entry,
    accepted,
    withheld,
    removed,
  };
}

/** One line per withheld item: `new hook … (.agent/settings.json)`. */
export function describeWithheld(withheld: readonly WithheldItem[]): string[] {
  return withheld.map(({ item, reason }) => {
    const prefix = reason === 'untrusted' ? '' : `${reason} `;
    return `${prefix}${printable(item.description)} (${printable(item.source)})`;
  });
}

/**
 * A description as a question may show it: the repository wrote it, and `ESC [2K` or a carriage
 * return in a hook command would erase and rewrite its line on the terminal — the user asked to
 * trust `echo done` while the hook runs `curl … | sh`. Each control character (C0, DEL, C1) and
 * bidirectional control is shown as an escape, and so is each character a terminal draws as
 * nothing (zero-width spaces and joiners, the byte-order mark, the soft hyphen, Hangul fillers,
 * tag characters): a hook `./fmt\u200b.sh` read as `./fmt.sh`, the file the user had checked.
 */
function printable(text: string): string {
  let result = '';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    const acts =
      code < 0x20 ||
      (code >= 0x7f && code <= 0x9f) ||
      code === 0x061c ||
      code === 0x200e ||
      code === 0x200f ||
      (code >= 0x202a && code <= 0x202e) ||
      (code >= 0x2066 && code <= 0x2069) ||
      isInvisible(code);
    result += !acts
      ? char
      : code <= 0xff
        ? `\\x${code.toString(16).padStart(2, '0')}`
        : code <= 0xffff
          ? `\\u${code.toString(16).padStart(4, '0')}`
          : `\\u{${code.toString(16)}}`;
  }
  return result;
}

/** Characters a terminal draws as nothing (see {@link printable}). */
function isInvisible(code: number): boolean {
  return (
    code === 0x00ad ||
    code === 0x115f ||
    code === 0x1160 ||
    code === 0x180e ||
    (code >= 0x200b && code <= 0x200d) ||
    (code >= 0x2060 && code <= 0x2064) ||
    code === 0x3164 ||
    code === 0xfeff ||
    code === 0xffa0 ||
    (code >= 0xe0000 && code <= 0xe007f)
  );
}
