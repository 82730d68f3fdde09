/**
 * Learned term associations for `tool_search`: for a word, other words that API documentation
 * uses in the same sense ("song" → "track", "bill" → "invoice"), each with a strength. A query
 * word then also finds tools described with its associates. The data is learned offline from a
 * corpus of API documents and shipped separately (`@agent/tool-search-data`), so the core stays
 * small; this module only reads it.
 *
 * Text format, one word a line: `word<TAB>associate:strength associate:strength …`, strengths
 * 1–9 (tenths), words stemmed as `searchTerms` stems them; a phrase is its words joined by `_`
 * (`hang_up`). Lines starting with `#` are comments.
 */

/** One associate of a word. */
export interface TermAssociate {
  term: string;
  /** 0–1: how much of the word's weight the associate gets in a query. */
  strength: number;
}

// A whole entry, checked at load; its associates are read when a query needs them.
const entryPattern = /^[a-z0-9]+(?:_[a-z0-9]+)*\t[a-z0-9]+:[1-9](?: [a-z0-9]+:[1-9])*$/;

/** Word → associates, strongest first. */
export class ToolSearchAssociations {
  // Each word's list as text (`invoice:4 account:5`), read on demand: ~30k words parse in a few
  // ms and hold little heap, rather than a quarter of a million objects built up front.
  readonly #lists: Map<string, string | readonly TermAssociate[]>;

  private constructor(lists: Map<string, string | readonly TermAssociate[]>) {
    this.#lists = lists;
  }

  /** Reads the text format; throws naming the line on a malformed entry. */
  static parse(text: string): ToolSearchAssociations {
    const lists = new Map<string, string>();
    let start = 0;
    for (let line = 1; start < text.length; line++) {
      const end = text.indexOf('\n', start);
      const entry = text.slice(start, end === -1 ? text.length : end);
      start = end === -1 ? text.length : end + 1;
      if (entry === '' || entry.startsWith('#')) continue;
      if (!entryPattern.test(entry)) throw malformed(entry, line);
      const tab = entry.indexOf('\t');
      lists.set(entry.slice(0, tab), entry.slice(tab + 1));
    }
    return new ToolSearchAssociations(lists);
  }

  /** Builds from a map (tests, or data learned at run time). */
  static from(
    entries: Iterable<readonly [string, readonly TermAssociate[]]>,
  ): ToolSearchAssociations {
    return new ToolSearchAssociations(new Map(entries));
  }

  /** Associates of a stemmed word, strongest first (empty when it has none). */
  related(term: string): readonly TermAssociate[] {
    const list = this.#lists.get(term);
    if (list === undefined) return [];
    if (typeof list !== 'string') return list;
    return list.split(' ').map((pair) => {
      const colon = pair.indexOf(':');
      return { term: pair.slice(0, colon), strength: Number(pair.slice(colon + 1)) / 10 };
    });
  }

  /** Number of words with associates. */
  get size(): number {
    return this.#lists.size;
  }
}

/** The error for a malformed entry: which line, and what is wrong with it. */
function malformed(entry: string, line: number): Error {
  const [term = '', list] = entry.split('\t');
  if (list === undefined || list === '' || !/^[a-z0-9]+(_[a-z0-9]+)*$/.test(term))
    return new Error(`Tool search associations, line ${line}: expected "word<TAB>associates"`);
  const bad = list.split(' ').find((pair) => !/^[a-z0-9]+:[1-9]$/.test(pair)) ?? list;
  return new Error(
    `Tool search associations, line ${line}: "${bad}" is not "associate:strength" (1–9)`,
  );
}
