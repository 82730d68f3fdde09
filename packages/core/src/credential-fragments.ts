/**
 * A credential cut short is still most of a credential. Messages are shortened for a line — a
 * retry notice at 160 characters, an MCP server's error report, a transcript line, a tool listing —
 * and the redactor, looking for whole values, missed what was left: `http://alice:Tr0ub4dor-pass…`
 * showed all but the end of a password. A fragment is therefore redacted where a text was cut:
 * the start of a value right before an ellipsis (`…`, `...`) or at the very end of the text, and
 * the end of a value right after an ellipsis or at the very start of the text (a value split
 * between two writes) — also outside the brackets of an omission note (`head\n[… 120 characters
 * cut …]\ntail`, as bash, the REPLs and the result budget write them).
 */

/** The shortest fragment of a value of this length that is redacted (4 to 8 characters). */
function fragmentMinimum(length: number): number {
  return Math.max(4, Math.min(8, Math.floor(length / 2)));
}

const ellipses = /…|\.\.\./g;

/** Space and the bracket of an omission note (`head\n[… 12 characters cut …]\ntail`). */
const noteEdge = /[\s[\]]/;

/**
 * Where the text cut beside an ellipsis at `at` is, past the edge of an omission note around it
 * (at most 3 characters of space and bracket), looking back (`-1`) or forward (`1`).
 */
function besideNote(text: string, at: number, direction: -1 | 1): number {
  let position = at;
  for (let step = 0; step < 3; step++) {
    const next = direction === -1 ? text[position - 1] : text[position];
    if (next === undefined || !noteEdge.test(next)) break;
    position += direction;
  }
  return position;
}

interface Cut {
  start: number;
  end: number;
  marker: string;
}

/** Where the start of `value` (at least `minimum` characters, not all of it) ends right at `at`. */
function prefixEndingAt(text: string, at: number, value: string, minimum: number): number {
  const head = value.slice(0, minimum);
  // Only the stretch a fragment could cover is searched: a search to the end of the text at
  // every ellipsis was quadratic in a long text of them.
  const from = Math.max(0, at - value.length + 1);
  const window = text.slice(from, at);
  for (let found = window.indexOf(head); found !== -1; found = window.indexOf(head, found + 1))
    if (value.startsWith(window.slice(found))) return from + found;
  return -1;
}

/** How far the end of `value` (at least `minimum` characters, not all of it) runs from `at`. */
function suffixStartingAt(text: string, at: number, value: string, minimum: number): number {
  const needle = text.slice(at, at + minimum);
  if (needle.length < minimum) return -1;
  for (
    let found = value.indexOf(needle, 1);
    found !== -1;
    found = value.indexOf(needle, found + 1)
  ) {
    const rest = value.slice(found);
    if (text.startsWith(rest, at)) return at + rest.length;
  }
  return -1;
}

/**
 * `text` with the fragments of `replacements`' values left at its cuts replaced by their markers.
 * Values are tried longest first; the text is searched only at its ellipses and its two ends.
 */
export function redactCutFragments(
  text: string,
  replacements: readonly (readonly [value: string, marker: string])[],
): string {
  if (replacements.length === 0 || text === '') return text;
  const before = [text.length];
  const after = [0];
  for (const match of text.matchAll(ellipses)) {
    const end = match.index + match[0].length;
    before.push(match.index, besideNote(text, match.index, -1));
    after.push(end, besideNote(text, end, 1));
  }
  const cuts: Cut[] = [];
  for (const [value, marker] of replacements) {
    const minimum = fragmentMinimum(value.length);
    for (const at of before) {
      const start = prefixEndingAt(text, at, value, minimum);
      if (start !== -1) cuts.push({ start, end: at, marker });
    }
    for (const at of after) {
      const end = suffixStartingAt(text, at, value, minimum);
      if (end !== -1) cuts.push({ start: at, end, marker });
    }
  }
  if (cuts.length === 0) return text;
  // Left to right; a fragment overlapping one already taken is dropped (both cover the same text).
  cuts.sort((a, b) => a.start - b.start || b.end - a.end);
  let result = '';
  let position = 0;
  for (const cut of cuts) {
    if (cut.start < position) continue;
    result += text.slice(position, cut.start) + cut.marker;
    position = cut.end;
  }
  return result + text.slice(position);
}
