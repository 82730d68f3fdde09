/**
 * Text from outside the program — a repository's configuration, a model's answer, a tool's
 * output, a server's message — made safe to print on a terminal. Control characters would act on
 * the terminal instead of being read: `ESC [2K` and a carriage return erase and rewrite a line (a
 * hook command shown as `echo done` while it is `curl … | sh`, an approval question that hides
 * what it approves), `ESC ] 52` sets the clipboard, `ESC ] 0` the title; bidirectional controls
 * reorder what is shown. Each is shown as an escape instead: `\x1b`, `\r`, `\u202e`.
 */

const named: Record<number, string> = { 9: '\\t', 10: '\\n', 13: '\\r' };

/**
 * C0 controls (tab and newline included), DEL, C1 controls (U+0080–U+009F: 8-bit CSI and OSC in
 * some terminals), and the bidirectional marks, embeddings, overrides and isolates.
 */
function isControlOrReordering(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/**
 * Characters a terminal draws as nothing (or as a blank): zero-width spaces and joiners, the word
 * joiner and invisible operators, the byte-order mark, the soft hyphen, the Mongolian vowel
 * separator, the Hangul fillers, and the tag characters (U+E0000–U+E007F, which spell out hidden
 * ASCII). In a question they make one name look like another: a hook `./fmt\u200b.sh` reads as
 * `./fmt.sh`, the harmless file the user checked, while another file runs.
 */
function isInvisible(codePoint: number): boolean {
  return (
    codePoint === 0x00ad ||
    codePoint === 0x115f ||
    codePoint === 0x1160 ||
    codePoint === 0x180e ||
    (codePoint >= 0x200b && codePoint <= 0x200d) ||
    (codePoint >= 0x2060 && codePoint <= 0x2064) ||
    codePoint === 0x3164 ||
    codePoint === 0xfeff ||
    codePoint === 0xffa0 ||
    (codePoint >= 0xe0000 && codePoint <= 0xe007f)
  );
}

/**
 * Whether the code point at `code` acts on a terminal (tab and newline only in one line), or in
 * one line is drawn as nothing.
 */
function acts(codePoint: number, singleLine: boolean): boolean {
  if (codePoint === 0x09 || codePoint === 0x0a) return singleLine;
  return isControlOrReordering(codePoint) || (singleLine && isInvisible(codePoint));
}

function shown(codePoint: number): string {
  if (codePoint > 0xffff) return `\\u{${codePoint.toString(16)}}`;
  return (
    named[codePoint] ??
    (codePoint <= 0xff
      ? `\\x${codePoint.toString(16).padStart(2, '0')}`
      : `\\u${codePoint.toString(16).padStart(4, '0')}`)
  );
}

/**
 * `text` with every character that would act on a terminal (see the module comment) shown as an
 * escape. Tabs and newlines stay, unless `singleLine` (a question, a one-line summary), which also
 * shows the characters a terminal draws as nothing (zero-width spaces, tag characters…).
 */
export function terminalSafe(text: string, options: { singleLine?: boolean } = {}): string {
  const singleLine = options.singleLine === true;
  let result = '';
  let from = 0;
  for (let index = 0; index < text.length; index++) {
    // Code points: a tag character is a surrogate pair.
    const codePoint = text.codePointAt(index) ?? 0;
    const width = codePoint > 0xffff ? 2 : 1;
    if (acts(codePoint, singleLine)) {
      result += text.slice(from, index) + shown(codePoint);
      from = index + width;
    }
    index += width - 1;
  }
  return from === 0 ? text : result + text.slice(from);
}

/**
 * Text from outside (a page's title, a skill's description) as one printable line, for a
 * listing the model or a user reads line by line: every control character, line or paragraph
 * separator (U+2028/U+2029) and bidirectional control becomes a space, whitespace is folded and
 * trimmed, and a line over `max` characters is cut there with `…` added [no limit].
 */
export function oneLineText(text: string, max = Number.POSITIVE_INFINITY): string {
  let line = '';
  let from = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (!isControlOrReordering(code) && code !== 0x2028 && code !== 0x2029) continue;
    line += `${text.slice(from, index)} `;
    from = index + 1;
  }
  line = (from === 0 ? text : line + text.slice(from)).replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}
