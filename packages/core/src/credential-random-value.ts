/**
 * The last credential rule: a value that looks like a random secret, whatever its name and
 * format — for the keys no name or format rule knows (`MFA_SEED=JBSWY3DPEHPK3PXP…`,
 * `DEEPGRAM=<40 hex>`, `MY_SVC=<32 random characters>`). Random ids that are no secret (a
 * UUID under a name that does not say it is an id, `WT_SESSION`) look the same and are withheld
 * too: that costs a `passEnv` entry, where a key passed is in the model's context. A value that
 * is a list or words (`user:key`, `a=b,key=…`, `--token key`) is judged piece by piece, a
 * `name=value` piece under its own name. What is kept: paths, URLs (their own rules read them),
 * short values, identifiers made of words (`stable-x86_64-unknown-linux-gnu`,
 * `SpringBootApplication`, a pod name), an id under a name that says so (a UUID, hex groups or a
 * ULID under `*_ID`, `*_UUID`, `guid=`: `AZURE_TENANT_ID`, `INVOCATION_ID`; never one 40- or
 * 64-hex group, an old GitHub token's form) and a hex digest under a name that says so
 * (`GITHUB_SHA`, `CI_COMMIT_SHA`, `PYTHON_SHA256`, `TURBO_HASH`). A kept id is also not redacted:
 * a withheld tenant id or commit id would make every `az account show` or `git log` a marker.
 * The figures that chose the thresholds are in core's README ("Keys of no known format").
 */

import type { CredentialRule } from './credential-environment.js';

/** One token of key characters, 16 or more: base64 (also url-safe), hex, base32, base58, words joined by `-_.`. */
const keyToken = /^[A-Za-z0-9+/=_.~-]{16,}$/;
/** A path: what starts like one is one, but for standard base64 (see {@link slashBase64}). */
const pathStart = /^[/.~]/;
/** Standard base64 that starts with `/` (1 key in 64): padded, or holding a `+`, which paths do not. */
const slashBase64 = (value: string) =>
  /^\/[A-Za-z0-9+/]{15,}={0,2}$/.test(value) &&
  value.length % 4 === 0 &&
  (value.endsWith('=') || value.includes('+'));
/** What separates the pieces of a list or of words: `user:key`, `a=b,key=…`, `--token key`. */
const pieceSeparator = /[\s,;:|"'`()[\]{}<>]+/;
/** A `name=value` piece (`key=…`, `--token=…`): the value is judged under that name. */
const assignment = /^-{0,2}([A-Za-z_][A-Za-z0-9_.-]*)=(.*[^=].*)$/;
const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const hexOnly = /^(?:[0-9a-f]+|[0-9A-F]+)$/;
/** A name whose last word says its value is a digest or a commit: a word ending in SHA, SHA256, COMMIT, REF, HASH… */
const digestName =
  /(?:^|[^A-Z0-9])[A-Z0-9]*(?:SHA\d*|COMMIT|REV|REVISION|HASH|DIGEST|CHECKSUM|VERSION|REF|HEAD|RELEASE)(?=$|[^A-Z0-9])/;
/**
 * A name's last word that says its value is an id (`INVOCATION_ID`, `LaunchInstanceID`, `guid`),
 * or a list of them (`CUDA_VISIBLE_DEVICES=GPU-<uuid>,GPU-<uuid>`).
 */
const idWords = new Set(['ID', 'IDS', 'UUID', 'GUID', 'ULID', 'IDENTIFIER', 'DEVICES']);
/** An id's form: hex groups joined by `-` (a UUID, an X-Ray trace id), in braces or after a word (`github_`). */
const hexId =
  /^\{?(?:[A-Za-z]+[_-])?[0-9a-f]+(?:-[0-9a-f]+)*\}?$|^\{?(?:[A-Za-z]+[_-])?[0-9A-F]+(?:-[0-9A-F]+)*\}?$/;
/** One hex group of 40 or 64: a commit or a digest, but also an old GitHub token's form — an id name does not keep it. */
const keyLengthHex = /(?:^|[^0-9a-fA-F])(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$/;
/** A ULID (Crockford base32, 26 characters, time first). */
const ulid = /^(?:[A-Za-z]+[_-])?[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

function lastWord(name: string): string {
  const words = name.replace(/([a-z0-9])(?=[A-Z])/g, '$1_').split(/[^A-Za-z0-9]+/);
  return (words.filter((word) => word !== '').at(-1) ?? '').toUpperCase();
}

/** Whether a name says its value is an id, a reference or a digest (`*_ID`, `guid`, `*_REF`, `*_SHA`). */
function namesAnId(name: string): boolean {
  return idWords.has(lastWord(name)) || digestName.test(name.toUpperCase());
}

/** Whether `value` is an id of a well-known harmless form (see {@link hexId}). */
function harmlessId(value: string): boolean {
  if (ulid.test(value)) return true;
  return hexId.test(value) && !keyLengthHex.test(value.replace(/\}$/, ''));
}

/** A letter chunk of words: lower, upper, or capitalised words one after another (`springBoot`, `AWS`, `ContextSelector`). */
const wordsChunk = /^(?:[a-z]+|[A-Z]+)?(?:[A-Z][a-z]+)*$/;
/** Base32 (RFC 4648): a TOTP seed, which has few digits and one case, so few changes of kind. */
const base32Run = /^[A-Z2-7]{16,}$/;

/**
 * How often a run of letters and digits changes kind: between a letter and a digit, and between
 * small and capital letters inside a chunk of letters that is not words (`JarLauncher`'s capital
 * starts a word; `qRkZ`'s do not). Random keys change kind every few characters, identifiers
 * rarely.
 */
function kindChanges(run: string): number {
  let changes = 0;
  for (let index = 1; index < run.length; index++)
    if (isDigit(run[index - 1]) !== isDigit(run[index])) changes++;
  for (const chunk of run.match(/[A-Za-z]+/g) ?? []) {
    if (wordsChunk.test(chunk)) continue;
    for (let index = 1; index < chunk.length; index++)
      if (isSmall(chunk[index - 1]) !== isSmall(chunk[index])) changes++;
  }
  return changes;
}

const isDigit = (character: string | undefined) =>
  character !== undefined && character >= '0' && character <= '9';
const isSmall = (character: string | undefined) =>
  character !== undefined && character >= 'a' && character <= 'z';

/** At least this many changes of kind, and one per this many characters, make a run random. */
const minimumChanges = 4;
const changesPerCharacter = 0.2;

/** Fewer different characters than this and a run is a pattern (`a1a1a1…`, `2024111720241117`), not random. */
const minimumDistinct = 8;

function randomRun(run: string): boolean {
  if (!/[0-9]/.test(run) || !/[A-Za-z]/.test(run)) return false;
  if (new Set(run).size < minimumDistinct) return false;
  if (base32Run.test(run) && (run.match(/[2-7]/g)?.length ?? 0) >= 2) return true;
  return kindChanges(run) >= Math.max(minimumChanges, changesPerCharacter * run.length);
}

/** Whether `value` (of variable `name`) looks like a random secret: see the file's comment. */
export function looksLikeRandomSecret(name: string, value: string): boolean {
  if (value.length < 16) return false;
  // URLs have rules of their own (a password, a key in the query or the path).
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(value)) return false;
  for (const piece of value.split(pieceSeparator)) {
    const named = assignment.exec(piece);
    const random =
      named === null
        ? randomToken(piece, name, name)
        : randomToken(named[2] ?? '', named[1] ?? '', name);
    if (random) return true;
  }
  return false;
}

/** Whether one token `value`, under `name` (inside a variable `outer`), looks like a random secret. */
function randomToken(value: string, name: string, outer: string): boolean {
  if (value.length < 16 || !keyToken.test(value)) return false;
  if ((namesAnId(name) || namesAnId(outer)) && harmlessId(value)) return false;
  if (pathStart.test(value) && !slashBase64(value)) return false;
  if (uuid.test(value)) return true;
  if (
    hexOnly.test(value) &&
    (digestName.test(name.toUpperCase()) || digestName.test(outer.toUpperCase()))
  )
    return false;
  // Runs of letters and digits; and standard base64's runs with its `+` and `/` left out.
  const runs: string[] = value.match(/[A-Za-z0-9]{16,}/g) ?? [];
  for (const run of value.match(/[A-Za-z0-9+/]{16,}/g) ?? []) {
    const joined = run.replace(/[+/]/g, '');
    if (joined !== run && joined.length >= 16) runs.push(joined);
  }
  return runs.some(randomRun);
}

/**
 * The rule {@link looksLikeRandomSecret} stands for in `credentialRuleOf`'s answers. Its `pattern`
 * is only the shape judged (one token of 16+ key characters), not the judgement: it is not one of
 * `credentialValueRules`, which are looked for inside texts.
 */
export const randomValueRule: CredentialRule = {
  id: 'random-value',
  description:
    'a value that looks like a random secret whatever its name: a token of 16+ key characters (alone, or a piece of a list or of words; not a path or URL) with a run of letters and digits that changes kind (letter/digit, small/capital outside words) at least 4 times and once per 5 characters and has 8+ different characters, a base32 run with 2+ digits, or a UUID; an id under a name ending in ID, UUID, GUID (a UUID, hex groups, a ULID; not 40 or 64 hex) and a hex digest under a name ending in SHA, COMMIT, HASH, REF, VERSION… are kept',
  pattern: keyToken,
};
