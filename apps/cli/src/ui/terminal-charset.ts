// The terminal's character set, from the locale (LC_ALL, LC_CTYPE, LANG — the first one set).
// The CLI wrote UTF-8 and read UTF-8 whatever the locale said: in a Latin-1 terminal
// (`LANG=de_DE.ISO-8859-1`) a typed `é` (one byte, 0xE9) reached the model as U+FFFD, and every
// glyph came out as bytes that terminal shows as other characters or obeys as C1 controls (the
// spinner's `⠏` is E2 A0 8F: 0x8F is SS3; a model's `Û`, C3 9B, is `Ã` and then CSI). Under
// `LANG=C` tmux and others show `_` for each non-ASCII character: `✓ bash` and `✗ bash` looked
// the same. Here the terminal's bytes are converted at the one place they pass.
import { Buffer } from 'node:buffer';

/** What the CLI writes to and reads from a terminal. */
export type TerminalCharset =
  /** UTF-8, or no locale set at all (Windows, many containers): as it always was. */
  | { kind: 'utf-8' }
  /** C/POSIX/ASCII, or a multi-byte set: the CLI's own glyphs in ASCII, other text as it is. */
  | { kind: 'ascii'; decoder?: string }
  /** A set of one byte per character (ISO-8859-x, KOI8, Windows-125x): converted both ways. */
  | { kind: 'single-byte'; decoder: string; bytes: ReadonlyMap<string, number> };

/** The codeset a locale names, in WHATWG Encoding's spelling; `ascii` for C/POSIX; undefined for none given. */
export function localeCodeset(env: NodeJS.ProcessEnv): string | undefined {
  const locale = [env.LC_ALL, env.LC_CTYPE, env.LANG].find(
    (value) => value !== undefined && value !== '',
  );
  if (locale === undefined) return undefined;
  if (locale === 'C' || locale === 'POSIX') return 'ascii';
  const [, codeset, modifier] = /^[^.@]*(?:\.([^@]*))?(?:@(.*))?$/.exec(locale) ?? [];
  // glibc's `de_DE@euro` is ISO-8859-15; a locale without a codeset is left as UTF-8.
  if (codeset === undefined || codeset === '')
    return modifier === 'euro' ? 'iso-8859-15' : undefined;
  const name = codeset.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (name === 'utf8') return 'utf-8';
  if (['ansix341968', 'ascii', 'usascii', 'c', 'posix'].includes(name)) return 'ascii';
  const iso = /^iso8859(\d+)$/.exec(name);
  if (iso !== null) return `iso-8859-${iso[1]}`;
  const windows = /^(?:cp|windows)(125\d)$/.exec(name);
  if (windows !== null) return `windows-${windows[1]}`;
  const known: Record<string, string> = {
    koi8r: 'koi8-r',
    koi8u: 'koi8-u',
    eucjp: 'euc-jp',
    euckr: 'euc-kr',
    sjis: 'shift_jis',
    shiftjis: 'shift_jis',
    gb2312: 'gbk',
    gbk: 'gbk',
    gb18030: 'gb18030',
    big5: 'big5',
    big5hkscs: 'big5',
  };
  return known[name] ?? name;
}

function readerOf(codeset: string): InstanceType<typeof TextDecoder> | undefined {
  try {
    return new TextDecoder(codeset);
  } catch {
    return undefined;
  }
}

const singleByte = /^(?:iso-8859-|windows-|koi8-|ibm866$|macintosh$|x-mac-)/;

/** The terminal's character set for `env`'s locale. */
export function terminalCharset(env: NodeJS.ProcessEnv): TerminalCharset {
  const codeset = localeCodeset(env);
  if (codeset === undefined || codeset === 'utf-8') return { kind: 'utf-8' };
  const decoder = readerOf(codeset);
  // A codeset Node cannot read: its ASCII part is safe.
  if (decoder === undefined) return { kind: 'ascii' };
  // WHATWG reads `ascii` and `iso-8859-1` as windows-1252.
  if (codeset === 'ascii') return { kind: 'ascii' };
  if (!singleByte.test(decoder.encoding)) return { kind: 'ascii', decoder: decoder.encoding };
  // What each byte of the set shows. 0x80–0x9F are left out: in an ISO-8859 terminal they are C1
  // controls (0x9B is CSI), whatever windows-1252 makes of them.
  const bytes = new Map<string, number>();
  for (let byte = 0xa0; byte <= 0xff; byte++) {
    const shown = decoder.decode(Uint8Array.of(byte));
    if (shown !== '\ufffd' && !bytes.has(shown)) bytes.set(shown, byte);
  }
  return { kind: 'single-byte', decoder: decoder.encoding, bytes };
}

// The CLI's own glyphs, in ASCII: the spinner's braille frames become `|/-\`.
const asciiGlyphs: Record<string, string> = {
  '—': '-',
  '–': '-',
  '…': '...',
  '⋯': '...',
  '→': '->',
  '←': '<-',
  '↳': '->',
  '⏎': '>>',
  '›': '>',
  '✓': '+',
  '✗': 'x',
  '×': 'x',
  '⚠': '!',
  '•': '*',
  '·': '.',
  '✉': '@',
  '≥': '>=',
  '≤': '<=',
  '‘': "'",
  '’': "'",
  '“': '"',
  '”': '"',
  '\u00a0': ' ',
};
// The spinner's frames (wait-spinner.ts) in turn; other braille as the first.
const spinnerFrames: Record<string, string> = {
  '⠋': '|',
  '⠙': '/',
  '⠹': '-',
  '⠸': '\\',
  '⠼': '|',
  '⠴': '/',
  '⠦': '-',
  '⠧': '\\',
  '⠇': '|',
  '⠏': '/',
};

/** `character` (not ASCII) in ASCII, if it is one of the CLI's glyphs. */
function asciiGlyph(character: string): string | undefined {
  const glyph = asciiGlyphs[character];
  if (glyph !== undefined) return glyph;
  const code = character.codePointAt(0) ?? 0;
  if (code >= 0x2800 && code <= 0x28ff) return spinnerFrames[character] ?? '|';
  // Box drawing: lines and their corners.
  if (code >= 0x2500 && code <= 0x257f) {
    if ('─━┄┅┈┉╌╍═'.includes(character)) return '-';
    if ('│┃┆┇┊┋╎╏║'.includes(character)) return '|';
    return '+';
  }
  return undefined;
}

const notAscii = /[\u0080-\u{10ffff}]/u;

/** `text` as the terminal should get it: a string (UTF-8) or the set's bytes. */
export function toTerminal(text: string, charset: TerminalCharset): string | Buffer {
  if (charset.kind === 'utf-8' || !notAscii.test(text)) return text;
  if (charset.kind === 'ascii')
    return text.replace(
      new RegExp(notAscii.source, 'gu'),
      (character) => asciiGlyph(character) ?? character,
    );
  const out: number[] = [];
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    if (code < 0x80) {
      out.push(code);
      continue;
    }
    const byte = charset.bytes.get(character);
    if (byte !== undefined) {
      out.push(byte);
      continue;
    }
    for (const ascii of asciiGlyph(character) ?? '?') out.push(ascii.charCodeAt(0));
  }
  return Buffer.from(out);
}

/** A converter of the terminal's bytes to UTF-8, keeping a character cut between two reads. */
export function fromTerminal(charset: TerminalCharset): ((chunk: Buffer) => Buffer) | undefined {
  const label = charset.kind === 'utf-8' ? undefined : charset.decoder;
  if (label === undefined) return undefined;
  const decoder = new TextDecoder(label);
  return (chunk) => Buffer.from(decoder.decode(chunk, { stream: true }), 'utf8');
}

/**
 * Converts what the CLI writes to a terminal (stdout, stderr) and what it reads from one (stdin)
 * for the locale's character set; nothing for UTF-8 or where no locale is set, nor for a
 * stream that is not a terminal (a pipe, a file: the bytes are the program's, UTF-8).
 */
export function adaptToTerminalCharset(env: NodeJS.ProcessEnv = process.env): TerminalCharset {
  const charset = terminalCharset(env);
  if (charset.kind === 'utf-8') return charset;
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.isTTY !== true) continue;
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) =>
      write(
        // A Buffer is the CLI's text too (the prompt's editor writes through a Writable).
        typeof chunk === 'string'
          ? toTerminal(chunk, charset)
          : Buffer.isBuffer(chunk)
            ? toTerminal(chunk.toString('utf8'), charset)
            : chunk,
        ...rest,
      )) as typeof stream.write;
  }
  const convert = fromTerminal(charset);
  if (convert !== undefined && process.stdin.isTTY === true) {
    // Every reader of the terminal (the prompt, the key reader, the questions) gets UTF-8: the
    // bytes are converted where the stream takes them in.
    const stdin = process.stdin;
    const push = stdin.push.bind(stdin);
    stdin.push = (chunk: unknown, encoding?: BufferEncoding) =>
      push(Buffer.isBuffer(chunk) ? convert(chunk) : chunk, encoding);
  }
  return charset;
}
