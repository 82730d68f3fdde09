/**
 * A path as the file tools show it to the model, one per line in a listing. A file name may hold
 * any byte but `/` and NUL: a newline in one (`evil\nsrc/index.ts`) forged a second entry in
 * glob, list_files and search output, a carriage return or `ESC [2K` rewrote the line on a
 * terminal, a right-to-left override (`\u202etxt.exe`) showed `exe.txt`. Such a path is shown as a
 * JSON string — quoted, those characters escaped — which is also how the model writes it back in
 * a tool call's JSON arguments, so the name it reads is the name it gets.
 */

/** C0 controls, DEL, C1 controls, line and paragraph separators, bidirectional controls. */
function isUnprintable(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    code === 0x2028 ||
    code === 0x2029 ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

const named: Readonly<Record<number, string>> = {
  8: '\\b',
  9: '\\t',
  10: '\\n',
  12: '\\f',
  13: '\\r',
};

/**
 * `text` unchanged when every character prints as itself and it does not start with `"`;
 * otherwise a JSON string literal of it, with the unprintable characters (see the module
 * comment) written as `\n`, `\r`, `\t` or `\uXXXX`.
 */
export function shownPath(text: string): string {
  let plain = !text.startsWith('"');
  for (let index = 0; plain && index < text.length; index++)
    if (isUnprintable(text.charCodeAt(index))) plain = false;
  if (plain) return text;
  let quoted = '"';
  for (const character of text) {
    const code = character.charCodeAt(0);
    if (character === '"' || character === '\\') quoted += `\\${character}`;
    else if (isUnprintable(code))
      quoted += named[code] ?? `\\u${code.toString(16).padStart(4, '0')}`;
    else quoted += character;
  }
  return `${quoted}"`;
}
