/**
 * PreToolUse guards of a trusted folder that are not in force: one that changed (or is new — a
 * guard inserted before another moves that one to a new key) waits for the user like any changed
 * item, and one removed from the file is gone. Either way the calls it answered for would run
 * unasked: a trusted guard that denied `bash` was rewritten by a pull to `exit 0`, and `agent -p`
 * ran bash unguarded (the new guard withheld, the old one no longer there). Until the user trusts
 * the folder again, the tools such a guard names ask first (-p: refused, exit 4) — as for a guard
 * that cannot be used (settings-problems.ts).
 */
import type { TrustDecision } from '@agent/workspace-trust';
import { guardedBy } from './settings-problems.js';

/** The key of a PreToolUse hook's item (`<file> hooks.PreToolUse[0].hooks[1]`), its file captured. */
const guardKey = /^(.*) hooks\.PreToolUse\[\d+\]\.hooks\[\d+\]$/;

/** A pinned guard no longer in the file, as the trust question and the notice name it. */
export interface RemovedGuard {
  /** What was trusted: `hook PreToolUse (bash) runs: ./guard.sh`. */
  description: string;
  /** The settings file it was in. */
  source: string;
  /** The tools it answered for (`*`: every tool). */
  tools: string[];
}

/** The pinned PreToolUse guards of `decision`'s entry that the folder's files no longer hold. */
export function removedGuards(decision: TrustDecision): RemovedGuard[] {
  const entry = decision.entry;
  if (entry === undefined || decision.state === 'trusted-by-flag') return [];
  const removed: RemovedGuard[] = [];
  for (const key of decision.removed) {
    const source = guardKey.exec(key)?.[1];
    const pinned = Object.hasOwn(entry.items, key) ? entry.items[key] : undefined;
    if (source === undefined || pinned === undefined || pinned.kind !== 'hook') continue;
    removed.push({
      description: pinned.description,
      source,
      tools: guardedBy({ matcher: matcherOf(pinned.description) }),
    });
  }
  return removed;
}

/**
 * The tools to ask about because a guard trusted there is not in force: in a folder trusted
 * before, each withheld PreToolUse guard's (changed or new) and, for a changed one, the tools the
 * guard pinned at its key answered for (keys are places in a list: removing the first of two
 * guards leaves the second at the first's key); and each removed one's.
 */
export function guardsNotInForceAsks(
  decision: TrustDecision,
  removed: readonly RemovedGuard[],
): string[] {
  const asks = removed.flatMap((guard) => guard.tools);
  const entry = decision.entry;
  if (decision.state === 'changed' && entry !== undefined)
    for (const { item } of decision.withheld) {
      if (item.kind !== 'hook' || !guardKey.test(item.key)) continue;
      const value = item.value as { matcher?: unknown } | null;
      asks.push(...guardedBy({ matcher: value?.matcher ?? undefined }));
      const pinned = Object.hasOwn(entry.items, item.key) ? entry.items[item.key] : undefined;
      if (pinned !== undefined) asks.push(...guardedBy({ matcher: matcherOf(pinned.description) }));
    }
  return [...new Set(asks)];
}

/**
 * The matcher a stored description names (`hook PreToolUse (Edit|Write) runs: …`); `undefined`
 * (every tool) when it names none or cannot be read for sure (a matcher holding `) runs: `).
 */
function matcherOf(description: string): string | undefined {
  const prefix = 'hook PreToolUse (';
  if (!description.startsWith(prefix)) return undefined;
  const rest = description.slice(prefix.length);
  const end = rest.indexOf(') runs: ');
  if (end === -1 || rest.indexOf(') runs: ', end + 1) !== -1) return undefined;
  return rest.slice(0, end);
}
