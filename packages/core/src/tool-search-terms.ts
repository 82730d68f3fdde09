/**
 * What a tool and a query say, as search terms: words split, stop words dropped, stemmed; the
 * fields of a tool the index weighs (BM25F) and its summary; and a query's terms with their
 * synonyms and learned associates. The index (`tool-search-index.ts`) scores with these.
 */
import type { JsonSchema } from './json-schema.js';
import { oneLineText } from './terminal-safe.js';
import type { AnyAgentTool } from './tool.js';
import type { ToolSearchAssociations } from './tool-search-associations.js';

/** A part of a tool that is indexed, with its BM25F weighting. */
export interface Field {
  weight: number;
  /** Length normalisation of this field (BM25F's b). */
  b: number;
  /** Count each term once in this field. */
  unique?: boolean;
  /**
   * Whether a term here counts in the term's document frequency (its IDF) and as a word the
   * catalogue uses. Off for the search text: a word every response holds (`customer` in each of
   * Stripe's) must not make the same word in names and descriptions look common, nor stop a
   * query word that only responses use from being expanded by the associations. Measured with
   * it counted (weight 0.2): core alone lost 3 points of tuned top-1, and the never-seen and
   * held-out indirect requests lost 1–3 points of top-5 with the data.
   */
  counted?: false;
  text: (tool: AnyAgentTool) => string;
}

// Words that say nothing about which tool: never indexed, never searched.
const stopWords = new Set(
  'a an and are as at be by for from get has have how i in into is it its me my of on or so that the their then there this to use used using via was what when which will with you your'.split(
    ' ',
  ),
);

/** Words of a text: split on non-alphanumerics and camelCase, lower-cased, lightly stemmed. */
export function searchTerms(text: string): string[] {
  const terms: string[] = [];
  const spaced = text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    // `HTMLParser` → `HTML Parser`; one capital looked at per position (`([A-Z]+)([A-Z][a-z])`
    // rescanned a run of capitals from each of its letters: quadratic in a hostile description).
    .replace(/([A-Z])(?=[A-Z][a-z])/g, '$1 ')
    .toLowerCase();
  for (const word of spaced.split(/[^a-z0-9]+/)) {
    if (word.length === 0 || stopWords.has(word)) continue;
    terms.push(stem(word));
  }
  return terms;
}

/** A light English stemmer: plurals and the usual verb endings, so "issues" finds "issue". */
function stem(word: string): string {
  if (word.length <= 3 || /^\d+$/.test(word)) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (/(ss|us|is)$/.test(word)) return word;
  if (word.endsWith('es') && /(s|x|z|ch|sh)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s')) return word.slice(0, -1);
  if (word.endsWith('ing') && word.length > 5) return word.slice(0, -3);
  if (word.endsWith('ed') && word.length > 4) return word.slice(0, -2);
  return word;
}

/** Property names of a schema, two levels deep (`owner`, `repo`, `labels`, `name`…). */
function parameterNames(schema: JsonSchema): string[] {
  const names: string[] = [];
  forEachProperty(schema, (name) => names.push(name));
  return names;
}

/**
 * What a schema says of its properties, two levels deep: each description (its first 200
 * characters) and the string values of each enum (`"state": open | closed`). A parameter often
 * says what the operation is for in other words than its summary ("the ID of the message to
 * remove from Trash").
 */
function parameterTexts(schema: JsonSchema): string[] {
  const texts: string[] = [];
  forEachProperty(schema, (_name, property) => {
    const { description, enum: values } = property as { description?: unknown; enum?: unknown };
    if (typeof description === 'string') texts.push(description.slice(0, 200));
    if (Array.isArray(values))
      texts.push(values.filter((value) => typeof value === 'string').join(' '));
  });
  return texts;
}

function forEachProperty(
  schema: JsonSchema,
  visit: (name: string, property: object) => void,
  depth = 0,
): void {
  if (depth > 1 || typeof schema !== 'object' || schema === null) return;
  const properties = (schema as { properties?: unknown }).properties;
  if (typeof properties !== 'object' || properties === null) return;
  for (const [name, property] of Object.entries(properties)) {
    if (typeof property !== 'object' || property === null) continue;
    visit(name, property);
    forEachProperty(property as JsonSchema, visit, depth + 1);
  }
}

/**
 * What an HTTP operation does, in the words people use, from the `METHOD /path` its description
 * names (OpenAPI and REST-wrapping tools do): `POST /v1/customers` creates, `GET …/{id}` gets,
 * `GET /v1/customers` lists, `PATCH`/`PUT` or `POST …/{id}` updates, `DELETE` deletes.
 */
function httpAction(description: string): string {
  const found = /\b(GET|POST|PUT|PATCH|DELETE)\s+(\/[^\s)]*)/.exec(description);
  if (found === null) return '';
  const [, method, path = ''] = found;
  const onItem = /\}\/?$/.test(path);
  switch (method) {
    case 'GET':
      return onItem ? 'get retrieve' : 'list';
    case 'POST':
      // POST on a collection (a plural last segment) creates; on an item, updates; else an action.
      return onItem ? 'update' : /s\/?$/.test(path) ? 'create' : '';
    case 'PUT':
    case 'PATCH':
      return 'update';
    default:
      return 'delete';
  }
}

// One identifier and its route: what an OpenAPI tool's description starts with when the operation
// has no summary and its id stands in (Square's specs: `RefundPayment (POST /v2/refunds)`).
const operationIdOnly = /^[A-Za-z][\w.:-]* \((GET|POST|PUT|PATCH|DELETE) [^()]*\)$/;

function firstSentence(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return /^(.+?[.!?])(\s|$)/.exec(line)?.[1] ?? line;
}

/**
 * The one-line summary shown for a match: the description's first sentence, HTML tags removed;
 * when that is only `METHOD /path` (as in some vendors' specs), or an operation id standing in
 * for a missing summary (`CompletePayment (POST /v2/payments/{payment_id}/complete)`), followed
 * by the next sentence.
 */
export function toolSummary(description: string): string {
  return summaryOf(description, true);
}

/** `toolSummary`, optionally without the sentence after an operation id (see `embeddingText`). */
export function summaryOf(description: string, afterOperationId: boolean): string {
  const paragraphs = description
    // A tag holds no `<`: `<[^>]*>` rescanned the rest of the text from each `<` of `<<<<…`.
    .replace(/<[^<>]*>/g, '')
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph !== '');
  let summary = firstSentence(paragraphs[0] ?? '');
  if (
    (/^[A-Z]+ \/\S*$/.test(summary) || (afterOperationId && operationIdOnly.test(summary))) &&
    paragraphs[1] !== undefined
  )
    summary = `${summary} — ${firstSentence(paragraphs[1])}`;
  // A description is the tool's author's (an MCP server's, a spec's): the summary the model and
  // the user read is one printable line, without the escape sequences or bidi overrides it held.
  const line = oneLineText(summary);
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

// BM25F: each field's term frequencies are normalised by that field's length, then weighted;
// a long description cannot drown the words of a short name.
export const fields: Field[] = [
  // Each word of a name counts once (`PostCustomersCustomer` is about customers, not twice so).
  { weight: 3, b: 0.75, unique: true, text: (tool) => `${tool.name} ${tool.label ?? ''}` },
  {
    weight: 2,
    b: 0.5,
    text: (tool) => `${(tool.keywords ?? []).join(' ')} ${httpAction(tool.description)}`,
  },
  { weight: 1, b: 0.75, text: (tool) => tool.description.replace(/<[^<>]*>/g, ' ') },
  { weight: 0.3, b: 0.5, text: (tool) => parameterNames(tool.parameters).join(' ') },
  // Measured: 0.2 found more on all three evaluation sets; 0.3 and up cost the held-out set.
  { weight: 0.2, b: 0.75, text: (tool) => parameterTexts(tool.parameters).join(' ') },
  // What the tool returns (`searchText`, e.g. a read operation's response fields): a question
  // finds the tool whose answer holds its words ("is alice online" → `presence`, `online`).
  // Measured: 0.3 (0.2–0.5 within a task) gained never-seen indirect requests and cost no set.
  { weight: 0.3, b: 0.75, counted: false, text: (tool) => tool.searchText ?? '' },
];

// Words people and models use for the same action or thing, and the HTTP methods that do it
// (operations are named and described by method: `PostCustomers`, `(POST /v1/customers)`). A
// query word also finds its group's other words, at half weight. Stemmed, as indexed.
// The groups that ask to read: getting one thing, listing, searching.
const readingGroups: readonly (readonly string[])[] = [
  ['get', 'retrieve', 'show', 'fetch', 'look', 'read', 'view', 'see', 'what', 'who', 'detail'],
  ['list', 'all', 'show', 'browse', 'enumerate'],
  ['search', 'find', 'query', 'lookup'],
];
const synonymGroups: readonly (readonly string[])[] = [
  ['create', 'post', 'add', 'new', 'make', 'open', 'start', 'register', 'submit', 'publish'],
  ['update', 'patch', 'put', 'edit', 'change', 'modify', 'set', 'close', 'rename'],
  ['delete', 'remove', 'destroy', 'drop', 'revoke', 'cancel'],
  ...readingGroups,
  ['repository', 'repo'],
  ['pull', 'pr'],
  ['user', 'me', 'authenticated', 'myself', 'account'],
  ['approve', 'review', 'accept'],
];
const readingWords = new Set(readingGroups.flat());

/**
 * Whether a request names reading: one of the words of the reading groups as written ("show",
 * "list", "find", "what"…, not stemmed: "shows" does not count).
 */
export function namesReading(query: string): boolean {
  return query
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .some((word) => readingWords.has(word));
}

const synonyms = new Map<string, string[]>();
for (const group of synonymGroups) {
  for (const word of group) {
    const others = group.filter((other) => other !== word).map(stem);
    synonyms.set(stem(word), [...(synonyms.get(stem(word)) ?? []), ...others]);
  }
}

/**
 * Query terms: the words themselves (weight 1), then their synonyms (weight 0.5), then learned
 * associates (up to 0.5, by strength), each scored with at most its source word's IDF — a rare
 * synonym ("revoke") must not outrank the common word the user wrote ("delete").
 */
export function queryTerms(
  query: string,
  associations: ToolSearchAssociations | undefined,
  indexed: (term: string) => boolean,
): Map<string, { weight: number; source: string }> {
  const terms = new Map<string, { weight: number; source: string }>();
  const words = searchTerms(query);
  for (const word of words) terms.set(word, { weight: 1, source: word });
  for (const word of words) {
    for (const other of synonyms.get(word) ?? []) {
      if (!terms.has(other)) terms.set(other, { weight: synonymWeight, source: word });
    }
  }
  if (associations !== undefined) {
    // Words the catalogue never uses (a vocabulary mismatch: "bill" where tools say "invoice"),
    // and adjacent pairs (`hang_up`): a word the catalogue uses already finds its tools, and
    // expanding it too only adds noise (measured: it cost the tuned set top-1 for no gain).
    const keys = [
      ...words.filter((word) => !indexed(word)),
      ...words.slice(1).map((word, at) => `${words[at]}_${word}`),
      ...separatedPhrasalVerbs(words),
    ];
    const add = (term: string, weight: number, source: string): void => {
      const known = terms.get(term);
      if (known === undefined) terms.set(term, { weight, source });
      else if (known.weight < weight) known.weight = weight;
    };
    for (const word of keys) {
      for (const { term, strength } of associations.related(word)) {
        const weight = associationWeight * strength;
        add(term, weight, word);
        // An associate's own synonyms, at half its weight: "call off" → "cancel" → "delete".
        for (const other of synonyms.get(term) ?? []) add(other, weight * synonymWeight, word);
      }
    }
  }
  return terms;
}

// What a synonym, and a learned associate at full strength, weigh against the word itself.
const synonymWeight = 0.5;
const associationWeight = 0.5;

// Particles that complete a phrasal verb ("on" and "in" are stop words, gone before this).
const particles = new Set(['up', 'down', 'off', 'back', 'over', 'out', 'away']);
// How far back from its particle a phrasal verb's verb may stand, in words kept.
const particleReach = 3;

/**
 * A verb and its particle with words between them, as an association key ("take our website
 * down" → `take_down`, "hand this task over" → `hand_over`); adjacent ones are pairs already.
 */
function separatedPhrasalVerbs(words: readonly string[]): string[] {
  const pairs: string[] = [];
  words.forEach((word, at) => {
    if (!particles.has(word)) return;
    for (let back = 2; back <= particleReach && at - back >= 0; back++)
      pairs.push(`${words[at - back]}_${word}`);
  });
  return pairs;
}
