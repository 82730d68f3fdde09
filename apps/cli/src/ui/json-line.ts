/**
 * A value as one line of JSON whose text cannot act on a terminal: JSON.stringify escapes C0
 * controls but writes DEL, the C1 controls (U+0080–U+009F: 8-bit CSI and OSC to some terminals),
 * the bidirectional controls and the line and paragraph separators as they are — a model's or a
 * server's text in stream-json, watched on a terminal or in a log viewer, reordered or rewrote
 * what was shown. Each is written as its `\uXXXX` escape instead: the same JSON value.
 */
export function jsonLine(value: unknown): string {
  const text = JSON.stringify(value);
  let line = '';
  let from = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (!escaped(code)) continue;
    line += `${text.slice(from, index)}\\u${code.toString(16).padStart(4, '0')}`;
    from = index + 1;
  }
  return from === 0 ? text : line + text.slice(from);
}

function escaped(code: number): boolean {
  return (
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x2028 && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}
