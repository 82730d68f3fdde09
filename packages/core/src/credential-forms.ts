/**
 * The other spellings a credential value takes on its way back into a text, for redaction at the
 * boundary where a tool's output enters the conversation. Exact matching misses what commands
 * do to text without anyone asking: `grep --color=always` puts colour codes inside the match,
 * `base64` wraps at 76 columns, Kubernetes secrets and Docker's `auths` are base64, URLs and logs
 * are percent-encoded, JSON writers escape characters as `\u00xx`, HTML as `&#xx;`.
 *
 * One regular expression per value matches, case-insensitively:
 * - the value with each character as itself, `\u00hh`, `\xhh`, `%hh`, `&#dd;` or `&#xhh;`, and
 *   between any two characters any run of separators: terminal escape sequences (also as the
 *   JSON text `\u001b[…m`), line breaks (also as the JSON text `\n`) and zero-width characters;
 * - the value reversed, the same way;
 * - its bytes in hexadecimal, and in base64 and base64url at each of the three byte alignments
 *   (only the characters the value's bytes alone decide), with separators between characters.
 *
 * Linear in the text: a separator never starts like a character of the value (those that could
 * are left out of the separators for that value), so no part of the pattern can match the same
 * text two ways and a failed start position is given up after one pass.
 *
 * Not caught, and not catchable this way: a value cut into pieces read by separate calls, spaced
 * out, or put through any transformation not listed here (a hostile model can always invent one).
 * Only keeping the value out of reach (credential-free environments, the sandbox) stops that.
 */

/** Forms shorter than this many characters are not looked for (they would match by chance). */
const minimumFormLength = 8;

const separatorForms: readonly [form: string, ruledOutBy: string][] = [
  // A CSI sequence (colours, erase): ESC [ parameters intermediates final.
  ['\\x1b\\[[0-?]*[ -/]*[@-~]', '\x1b'],
  // An OSC sequence (titles, hyperlinks), ended by BEL or ESC \.
  ['\\x1b\\][^\\x07\\x1b]*(?:\\x07|\\x1b\\\\)', '\x1b'],
  // The same CSI written into JSON text (it could also be the escape of an ESC in the value).
  ['\\\\u001b\\[[0-?]*[ -/]*[@-~]', '\\\x1b'],
  ['\\r', '\r'],
  ['\\n', '\n'],
  ['\\\\[rn]', '\\'],
  ['[\\u200b-\\u200d\\u2060\\ufeff]', '\u200b\u200c\u200d\u2060\ufeff'],
];

/**
 * The separator pattern for a value: only the forms that cannot start one of its characters (the
 * second member of each form lists the characters whose presence in the value rules it out).
 */
function separatorsFor(value: string, extra: readonly string[] = []): string {
  const forms = separatorForms
    .filter(([, ruledOutBy]) => ![...ruledOutBy].some((character) => value.includes(character)))
    .map(([form]) => form);
  forms.push(...extra);
  return forms.length === 0 ? '' : `(?:${forms.join('|')})*`;
}

function escapeForPattern(character: string): string {
  return character.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

/** One character as itself or as an escape of it. */
function characterForms(character: string): string {
  const code = character.codePointAt(0) ?? 0;
  const forms = [escapeForPattern(character)];
  if (code < 0x10000) {
    const hex4 = code.toString(16).padStart(4, '0');
    forms.push(`\\\\+u${hex4}`);
  }
  if (code < 0x80) {
    const hex2 = code.toString(16).padStart(2, '0');
    forms.push(`\\\\+x${hex2}`, `%${hex2}`, `&#0*${code};`, `&#x0*${hex2};`);
  }
  return forms.length === 1 ? (forms[0] ?? '') : `(?:${forms.join('|')})`;
}

function spelledOut(text: string, separators: string, escapes: boolean): string {
  return [...text]
    .map((character) => (escapes ? characterForms(character) : escapeForPattern(character)))
    .join(separators);
}

/** The base64 characters that the value's bytes alone decide, at each byte alignment. */
function base64Cores(bytes: Uint8Array): string[] {
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const padded = new Uint8Array(offset + bytes.length);
    padded.set(bytes, offset);
    let binary = '';
    for (const byte of padded) binary += String.fromCharCode(byte);
    const encoded = btoa(binary);
    const first = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * (offset + bytes.length)) / 6);
    const core = encoded.slice(first, end);
    if (core.length < minimumFormLength) continue;
    cores.push(core, core.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return cores;
}

/**
 * A regular expression source that matches `value` in any of the forms above; undefined when the
 * value is too short to look for. Compile it with the `gi` flags.
 */
export function credentialFormsSource(value: string): string | undefined {
  if (value.length < minimumFormLength) return undefined;
  const separators = separatorsFor(value);
  const bytes = new TextEncoder().encode(value);
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  const alternatives = new Set([
    spelledOut(value, separators, true),
    spelledOut([...value].reverse().join(''), separators, true),
    // Hex and base64 digits are never separators (none of `\x1b`, `\\`, line breaks, zero-width);
    // hex also as dumps write it, a space or colon between bytes (`od -An -tx1`, `6b:65`).
    spelledOut(hex, separatorsFor('', ['[ \\t:]']), false),
    ...base64Cores(bytes).map((core) => spelledOut(core, separatorsFor(''), false)),
  ]);
  return [...alternatives].join('|');
}
