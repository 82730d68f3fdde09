/**
 * A credential shown in pieces is still the credential. The commands that show a file byte by
 * byte put something between every 16 bytes: `xxd` and `hexdump -C` an offset and an ASCII column
 * (`Y=sk-ant-api03-Q`, then `w7Rt2Yu9Io4Pa6Sd` on the next line), `od -c` an offset and spaces
 * between the characters, `od -tx1` an offset before each line of hex; `cut -c20-60` prints a
 * middle stretch. None of them is the whole value in any form `credential-forms.ts` knows, and the
 * model read the key 16 characters a line. So, where a tool's output enters the conversation, any
 * stretch of at least 12 characters of a value (or 12 bytes in hexadecimal), read with white space
 * (and, for hex, colons) left out, and forwards or reversed, is replaced with the value's marker.
 *
 * Which part of a value is looked for: a value that is a URL or a connection string
 * (`postgres://alice:pw@db-1/app?password=…`) also names hosts, ports and paths that ordinary
 * output mentions, so only its runs of token characters holding both letters and digits count
 * (`Sup3rS3cretPw`, not `production-database`), and so does a list or a value of `name=value`
 * parts (`host=db.internal,port=5432,key=…`: the random-value rule reads keys inside them); any
 * other value counts whole (white space left out). A stretch that is no more than the value's public prefix and 3 characters
 * (`sk-ant-api03-` and `Q`: every Anthropic key starts so) is left alone — a README's
 * `sk-ant-api03-...` is no secret.
 *
 * Still not caught: pieces shorter than 12 characters (a value read 11 characters a call can
 * always be put together again by a hostile model; only keeping it out of reach stops that).
 */

/** The shortest stretch of a value replaced, in characters (and twice this in hex digits). */
const pieceMinimum = 12;

/**
 * Whether a text is read past this character: white space and zero-width characters, and in hex
 * also `:` (`6b:65`).
 */
function leftOut(code: number, hex: boolean): boolean {
  if (code === 0x20 || (code >= 0x09 && code <= 0x0d)) return true;
  if (hex && code === 0x3a) return true;
  if (code < 0x85) return false;
  return (
    code === 0x85 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200d) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x2060 ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** A character as it is compared: in hex, the digits A–F as a–f. */
function compared(code: number, hex: boolean): number {
  return hex && code >= 0x41 && code <= 0x46 ? code + 0x20 : code;
}

/** One string looked for in a text: stretches of it that go past `after` count. */
interface Target {
  text: string;
  /** A stretch must hold at least this many characters. */
  minimum: number;
  /** A stretch must reach past this index of `text` (the public prefix and 3 characters). */
  after: number;
  /** Whether the stretch must instead start before `text.length - after` (a reversed value). */
  reversed: boolean;
  marker: string;
}

interface Span {
  start: number;
  end: number;
  marker: string;
}

const urlLike = /:\/\/|@/;
/** A list or `name=value` parts (`host=db,key=…`, `deploy:<key>`): base64's `=` padding is none. */
const listLike = /[,;|:]|[^=]=[^=]/;
const tokenRun = /[A-Za-z0-9_+=-]+/g;

/** The parts of `value` whose pieces are looked for (see the file comment). */
function secretParts(value: string): string[] {
  if (!urlLike.test(value) && !listLike.test(value.replace(/=+$/, '')))
    return [[...value].filter((character) => !leftOut(character.charCodeAt(0), false)).join('')];
  return [...value.matchAll(tokenRun)]
    .map((match) => match[0])
    .filter((run) => /[A-Za-z]/.test(run) && /[0-9]/.test(run));
}

/**
 * The length of a part's public prefix: up to its last `-` or `_` among the first 16 characters
 * (`sk-ant-api03-`, `ghp_`, `github_pat_`, `xoxb-`), or none.
 */
function publicPrefix(part: string): number {
  const head = part.slice(0, 16);
  return Math.max(head.lastIndexOf('-'), head.lastIndexOf('_')) + 1;
}

function hexOf(text: string): string {
  let hex = '';
  for (const byte of new TextEncoder().encode(text)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

function targetsOf(
  replacements: readonly (readonly [value: string, marker: string])[],
): [plain: Target[], hex: Target[]] {
  const plain: Target[] = [];
  const hex: Target[] = [];
  const seen = new Set<string>();
  for (const [value, marker] of replacements)
    for (const part of secretParts(value)) {
      if (part.length < pieceMinimum || seen.has(part)) continue;
      seen.add(part);
      const after = Math.min(publicPrefix(part) + 3, part.length - 1);
      const reversed = [...part].reverse().join('');
      plain.push(
        { text: part, minimum: pieceMinimum, after, reversed: false, marker },
        { text: reversed, minimum: pieceMinimum, after, reversed: true, marker },
      );
      const prefixBytes = new TextEncoder().encode(part.slice(0, after)).length;
      const partHex = hexOf(part);
      hex.push({
        text: partHex,
        minimum: 2 * pieceMinimum,
        after: Math.min(2 * prefixBytes, partHex.length - 1),
        reversed: false,
        marker,
      });
    }
  return [plain, hex];
}

/** A block of a target: `size` characters of it from `at`. */
interface Block {
  target: Target;
  at: number;
}

/**
 * The blocks of some targets, to find in one pass. Every stretch of at least `minimum` characters
 * of a target holds one whole block of half that length at a multiple of it, so only the blocks
 * are looked for, by a rolling hash of each `size` characters of the text (one pass, whatever the
 * number of targets: an `indexOf` per block made a 5 MB result take seconds).
 */
interface BlockIndex {
  size: number;
  blocks: Map<string, Block[]>;
  /** Whether a block's hash ends in these 16 bits: a table look-up rules out most windows. */
  hashEnds: Uint8Array;
}

const hashBase = 257;

function hashOf(text: string): number {
  let hash = 0;
  for (let index = 0; index < text.length; index++)
    hash = (Math.imul(hash, hashBase) + text.charCodeAt(index)) | 0;
  return hash;
}

function blockIndexOf(targets: readonly Target[], size: number): BlockIndex {
  const blocks = new Map<string, Block[]>();
  for (const target of targets)
    for (let at = 0; at + size <= target.text.length; at += size) {
      const key = target.text.slice(at, at + size);
      const list = blocks.get(key);
      if (list === undefined) blocks.set(key, [{ target, at }]);
      else list.push({ target, at });
    }
  const hashEnds = new Uint8Array(0x10000);
  for (const key of blocks.keys()) hashEnds[hashOf(key) & 0xffff] = 1;
  return { size, blocks, hashEnds };
}

/** A text read past the characters {@link leftOut} skips (in hex, or not). */
interface Reading {
  text: string;
  hex: boolean;
}

/** The index of the first character read before `index` (-1: none). */
function readBefore({ text, hex }: Reading, index: number): number {
  let at = index - 1;
  while (at >= 0 && leftOut(text.charCodeAt(at), hex)) at--;
  return at;
}

/** The index of the first character read after `index` (`text.length`: none). */
function readAfter({ text, hex }: Reading, index: number): number {
  let at = index + 1;
  while (at < text.length && leftOut(text.charCodeAt(at), hex)) at++;
  return at;
}

/**
 * The stretch of `block`'s target found with its block from `first` to `last` (indexes of the
 * text), grown both ways as far as the text reads as the target; undefined when it is too short
 * or no more than the target's public prefix.
 */
function grow(reading: Reading, first: number, last: number, block: Block, size: number) {
  const { target, at } = block;
  const code = (index: number) => compared(reading.text.charCodeAt(index), reading.hex);
  let start = first;
  let back = 0;
  for (
    let previous = readBefore(reading, start);
    previous >= 0 && at - back > 0 && code(previous) === target.text.charCodeAt(at - back - 1);
    previous = readBefore(reading, previous)
  ) {
    start = previous;
    back++;
  }
  let end = last + 1;
  let forward = size;
  for (
    let next = readAfter(reading, last);
    next < reading.text.length &&
    at + forward < target.text.length &&
    code(next) === target.text.charCodeAt(at + forward);
    next = readAfter(reading, next)
  ) {
    end = next + 1;
    forward++;
  }
  const publicOnly = target.reversed
    ? at - back >= target.text.length - target.after
    : at + forward <= target.after;
  if (back + forward < target.minimum || publicOnly) return undefined;
  return { start, end, marker: target.marker };
}

/**
 * The stretches of the index's targets in `reading`, as spans of its text: one pass with a window
 * of the last `size` characters read (their codes and where they stand) and its rolling hash.
 */
function stretchesIn(reading: Reading, index: BlockIndex): Span[] {
  const { size, blocks, hashEnds } = index;
  const { text, hex } = reading;
  const spans: Span[] = [];
  // The weight of the character leaving the window: hashBase ** (size - 1), wrapped to 32 bits.
  let leaving = 1;
  for (let step = 1; step < size; step++) leaving = Math.imul(leaving, hashBase);
  const codes = new Uint16Array(size);
  const places = new Uint32Array(size);
  let read = 0;
  let slot = 0;
  let hash = 0;
  // Where the stretches found so far end: a find inside one is not grown again (in a text that
  // repeats a value's pattern, every position is a find). A stretch reaching 2 blocks past it
  // holds a block that starts past it, so at most a block's length of it is left to the marker
  // beside it.
  let covered = 0;
  for (let place = 0; place < text.length; place++) {
    const raw = text.charCodeAt(place);
    if (leftOut(raw, hex)) continue;
    const code = compared(raw, hex);
    if (read >= size) hash = (hash - Math.imul(codes[slot] ?? 0, leaving)) | 0;
    hash = (Math.imul(hash, hashBase) + code) | 0;
    codes[slot] = code;
    places[slot] = place;
    read++;
    slot = slot + 1 === size ? 0 : slot + 1;
    // The slot written next holds the oldest character of the window.
    if (read < size || hashEnds[hash & 0xffff] === 0) continue;
    const oldest = slot;
    const first = places[oldest] ?? 0;
    if (first < covered) continue;
    let window = '';
    for (let step = 0; step < size; step++)
      window += String.fromCharCode(codes[(oldest + step) % size] ?? 0);
    for (const block of blocks.get(window) ?? []) {
      const span = grow(reading, first, place, block, size);
      if (span === undefined) continue;
      spans.push(span);
      covered = Math.max(covered, span.end);
    }
  }
  return spans;
}

/**
 * A function that replaces, in a text, every stretch of at least 12 characters of a value of
 * `replacements` (read without white space, forwards or reversed, or as 12 bytes of hex without
 * spaces and colons) with its marker; overlapping stretches become one marker.
 */
export function credentialPiecesRedactor(
  replacements: readonly (readonly [value: string, marker: string])[],
): (text: string) => string {
  const [plainTargets, hexTargets] = targetsOf(replacements);
  if (plainTargets.length === 0) return (text) => text;
  const plain = blockIndexOf(plainTargets, Math.ceil(pieceMinimum / 2));
  const hex = blockIndexOf(hexTargets, pieceMinimum);
  return (text) => {
    if (text.length < pieceMinimum) return text;
    const spans = [
      ...stretchesIn({ text, hex: false }, plain),
      ...stretchesIn({ text, hex: true }, hex),
    ];
    return spans.length === 0 ? text : replaced(text, spans);
  };
}

/** `text` with each span replaced by its marker; overlapping spans become one marker. */
function replaced(text: string, spans: Span[]): string {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  let result = '';
  let position = 0;
  for (const span of spans) {
    if (span.start < position) {
      // Overlaps the one before (the same stretch read two ways): that marker covers it.
      position = Math.max(position, span.end);
      continue;
    }
    result += text.slice(position, span.start) + span.marker;
    position = span.end;
  }
  return result + text.slice(position);
}
