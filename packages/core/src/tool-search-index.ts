/**
 * The search behind `tool_search`: BM25 over what a tool is called and does (its name split
 * into words, description, keywords such as tags or an HTTP path, parameter names, and its
 * search text: what it returns), plus a
 * regex mode. No service, no model: deterministic (ties keep catalogue order), built once per
 * catalogue.
 */
import type { AnyAgentTool } from './tool.js';
import type { ToolSearchAssociations } from './tool-search-associations.js';
import { compileSearchPattern } from './tool-search-regex.js';
import {
  fields,
  namesReading,
  queryTerms,
  searchTerms,
  summaryOf,
  toolSummary,
} from './tool-search-terms.js';

export { searchTerms, toolSummary };

/** Options of a `ToolSearchIndex`. */
export interface ToolSearchIndexOptions {
  /**
   * Learned term associations (e.g. `@agent/tool-search-data`): a query word also finds tools
   * described with its associates, at a fraction of its weight.
   */
  associations?: ToolSearchAssociations;
  /**
   * Text embeddings (e.g. `toolSearchEmbeddings()` of `@agent/tool-search-data`): the best
   * keyword candidates are re-ranked by how close each tool's name and summary is in meaning to
   * the query.
   */
  embeddings?: ToolSearchEmbeddings;
}

/**
 * Embeds a short text as a vector of unit length (any dimension, the same for every text), or
 * `undefined` when it knows none of its words. Called for the query and for each candidate, with
 * `wordWeight`: a factor (0–1] for each word of the text (lower case, as the text splits into
 * words), by how many of the catalogue's tools use it — "index" in a search engine's API, or
 * "repository" in GitHub's, tells its tools apart less than "synonyms" does. An implementation
 * that ignores it still works.
 */
export interface ToolSearchEmbeddings {
  embed(text: string, wordWeight?: (word: string) => number): Float32Array | undefined;
}

/** One match of a search. */
export interface ToolSearchMatch {
  name: string;
  /** The first sentence (or line) of the description, at most 160 characters. */
  summary: string;
  score: number;
}

// Re-ranking: how many keyword candidates are re-scored, and what the cosine similarity of
// embeddings weighs against the keyword score (normalised to the best candidate's). Measured on
// the tuned-on and never-seen sets: re-scoring the top 100 gains what scoring every tool does.
const rerankCandidates = 100;
const embeddingWeight = 2;
// For a question, the similarity of the query to what a tool returns (its first `answerNames`
// response fields) weighs this much more. Measured: 0.6 (0.3–1 within a task) lifted never-seen
// top-1 by four tasks and cost nothing; for every request (not only questions) it cost the
// tuned set 5 points of top-1 (a bonus for every read operation), and adding the same names to
// the tool's own embedding text cost it 3.6.
const answerWeight = 0.6;
const answerNames = 12;
// What a request asks for, against what a tool may do (`policy.permission`: read-only for an
// OpenAPI GET or an MCP tool with `readOnlyHint`): a question is answered by a tool that only
// reads, a request that names no reading ("call off the standup", "take our website down") by one
// that changes things; the matching kind gets this much more, with or without embeddings.
// Measured in round six (0.2–0.5 the same), with the learned data: held-out top-5 70.0% → 71.9%,
// never-seen top-1 64.5% → 67.8%, no task of the three dev sets lower; keywords alone: held-out
// 61.9% → 64.4%, never-seen 73.8% → 75.4%. Read words looked up after stemming and stop words
// ("get", "what" dropped) cost the tuned set two tasks; as query words (get, list, retrieve) in
// round four it moved nothing.
const intentWeight = 0.3;
// A word's weight in the query's and each tool's embedding: a / (a + the share of the catalogue's
// tools that use it). Measured (round eleven, vectors trained without the validation APIs): a = 1
// lifted the validation split's goal requests (817, bench/src/tool-search/request-validation.ts)
// top-5 76.4% → 78.1% and MRR 0.557 → 0.565, held-out top-1 59.4% → 60.0%, never-seen top-5
// 86.3% → 85.8% (one task); a = 0.1–0.3 gained the same on the split and cost never-seen top-1 up
// to 3 points; on the query alone (not the tools) it cost the tuned set's top-1 7 points.
const catalogueWordWeight = 1;
// A request in words the catalogue does not use ("the build is stuck, kill it" against a CI
// API) is one its keyword score reads least well: the embeddings weigh
// embeddingWeight × (1 + uncoveredWeight × the share of the request's words no tool has). Measured
// (round twelve, vectors trained without the validation APIs): 1 / 2 / 3 / 5 lifted the validation
// split's goal requests (963) top-1 40.2% → 43.3 / 44.1 / 43.9 / 43.0%, top-5 78.0% → 79.5 /
// 80.2 / 79.2 / 78.5%, the dev sets within a task either way; a higher weight for every request
// (round eleven, 1–10) moved top-5 at most 0.3 points: it is the request's own coverage that tells.
const uncoveredWeight = 2;
// Such a request also takes the tools nearest it in meaning as candidates, beside the keyword
// matches: these many, in a catalogue of at most `nearestCatalogueSize` tools (a pass over every
// tool's vector: ~0.13 ms a query on GitHub's 1,223 tools, ~0.5 ms on 5,000, so larger catalogues
// keep their keyword candidates alone). Measured with the above: validation top-5 80.2% → 80.9%,
// never-seen 86.3% → 87.4%, held-out 75.0% → 75.6% (20 and 50 the same).
const nearestCandidates = 20;
const nearestCatalogueSize = 2_000;
// Words whose catalogue weight is kept for later texts, at most this many.
const wordWeightCacheSize = 50_000;
// Tools whose embeddings are kept for later queries, at most this many (~1 kB each with 100
// dimensions: the tool's and its answer's).
const embeddingCacheSize = 20_000;

/**
 * The text of a tool that its embedding is made from: its name, summary (without `METHOD /path`),
 * the words of its path and its keywords (tags) — what the shipped vectors were trained to match
 * (`/calendars/{calendarId}/events/{eventId}` says "calendar events").
 */
function embeddingText(tool: AnyAgentTool): string {
  // Without the sentence after an operation id: embedding it (Square's tools) cost one held-out
  // task of top-5 in round five and gained none, so the vectors keep reading what they did.
  const summary = summaryOf(tool.description, false)
    .replace(/\((GET|POST|PUT|PATCH|DELETE) [^()]*\)/g, ' ')
    .replace(/^(GET|POST|PUT|PATCH|DELETE) \S+( — )?/, ' ');
  const path = /\b(?:GET|POST|PUT|PATCH|DELETE)\s+(\/[^\s)]*)/.exec(tool.description)?.[1] ?? '';
  const pathWords = path.replace(/\{[^{}]*\}/g, ' ').replace(/[^A-Za-z0-9]+/g, ' ');
  return [tool.name, summary, pathWords, ...(tool.keywords ?? [])]
    .join(' ')
    .replace(/\s+/g, ' ')
    .replace(/ ([.,;:!?])/g, '$1')
    .trim();
}

/**
 * What a tool returns, as its answer vector is made from: the first names of its search text
 * (breadth first, so the top-level fields of a response).
 */
function answerText(tool: AnyAgentTool): string {
  return (tool.searchText ?? '').split('\n').slice(0, answerNames).join(' ').trim();
}

/** A tool's embeddings (`null`: the embeddings know none of the words). */
interface ToolVectors {
  tool: Float32Array | null;
  /** Of what it returns (`answerText`); `undefined` until a question needs it. */
  answer: Float32Array | null | undefined;
}

/**
 * A question ("how much do I owe", "is alice online right now", "what's in the trash?"): its
 * answer may be a field the tool returns.
 */
function isQuestion(query: string): boolean {
  return questionPattern.test(query);
}
const questionPattern =
  /^\s*(how|who|whom|whose|what|which|when|where|why|is|are|was|were|do|does|did|has|have|can)\b|\?\s*$/i;

function cosine(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  const length = Math.min(a.length, b.length);
  for (let at = 0; at < length; at++) sum += (a[at] as number) * (b[at] as number);
  return sum;
}

// BM25's term-frequency saturation.
const k1 = 1.2;
// Added for a name wholly covered by the query's words (scaled by the share covered).
const nameCoverageBoost = 3;

/** A document by its position in the catalogue, with its score. */
interface Ranked {
  index: number;
  score: number;
}

interface Document {
  tool: AnyAgentTool;
  /** For regex mode: name, keywords and description. */
  text: string;
}

/**
 * The documents a term occurs in, with what scoring needs precomputed: the term's weighted,
 * length-normalised frequency over the fields (BM25F), and its share of the document's name
 * (1 / the name's distinct words when the name has it, else 0).
 */
interface Postings {
  /** How many documents have the term in a counted field (all that have it, when none does). */
  frequency: number;
  /** Whether some document has the term in a counted field. */
  counted: boolean;
  documents: Int32Array;
  frequencies: Float64Array;
  nameShares: Float64Array;
}

/** An index over a catalogue of tools; build once, query many times. */
export class ToolSearchIndex {
  readonly #documents: Document[] = [];
  readonly #postings = new Map<string, Postings>();
  readonly #byName = new Map<string, number>();
  /** Scratch space of `search`, one slot per document (zeroed after each query). */
  readonly #scores: Float64Array;

  readonly #associations: ToolSearchAssociations | undefined;
  readonly #embeddings: ToolSearchEmbeddings | undefined;
  /** Tool embeddings by document, computed when a tool is first a candidate. */
  readonly #vectors = new Map<number, ToolVectors>();
  /** Every tool's vector as one matrix (`#meaningMatrix`), once a search needed it. */
  #matrix: Float32Array | undefined;

  constructor(tools: Iterable<AnyAgentTool>, options: ToolSearchIndexOptions = {}) {
    this.#associations = options.associations;
    this.#embeddings = options.embeddings;
    const perDocument: { frequencies: Map<string, number>[]; lengths: number[] }[] = [];
    const totals = fields.map(() => 0);
    for (const tool of tools) {
      const frequencies = fields.map(() => new Map<string, number>());
      const lengths = fields.map(() => 0);
      fields.forEach((field, at) => {
        const map = frequencies[at] as Map<string, number>;
        for (const term of searchTerms(field.text(tool))) {
          if (field.unique === true && map.has(term)) continue;
          map.set(term, (map.get(term) ?? 0) + 1);
          lengths[at] = (lengths[at] as number) + 1;
        }
        totals[at] = (totals[at] as number) + (lengths[at] as number);
      });
      if (!this.#byName.has(tool.name)) this.#byName.set(tool.name, this.#documents.length);
      perDocument.push({ frequencies, lengths });
      this.#documents.push({
        tool,
        text: `${tool.name}\n${(tool.keywords ?? []).join(' ')}\n${tool.description}`,
      });
    }
    const count = Math.max(1, this.#documents.length);
    const averages = totals.map((total) => Math.max(1, total / count));
    // Gathered per term first, then packed into typed arrays.
    const gathered = new Map<
      string,
      { documents: number[]; frequencies: number[]; shares: number[]; counted: number }
    >();
    perDocument.forEach(({ frequencies, lengths }, index) => {
      const nameSize = (frequencies[0] as Map<string, number>).size;
      const weighted = new Map<string, number>();
      const counted = new Set<string>();
      fields.forEach((field, at) => {
        const norm = 1 - field.b + (field.b * (lengths[at] as number)) / (averages[at] as number);
        for (const [term, raw] of frequencies[at] as Map<string, number>) {
          weighted.set(term, (weighted.get(term) ?? 0) + (field.weight * raw) / norm);
          if (field.counted !== false) counted.add(term);
        }
      });
      for (const [term, frequency] of weighted) {
        let list = gathered.get(term);
        if (list === undefined) {
          list = { documents: [], frequencies: [], shares: [], counted: 0 };
          gathered.set(term, list);
        }
        if (counted.has(term)) list.counted++;
        list.documents.push(index);
        list.frequencies.push(frequency);
        list.shares.push((frequencies[0] as Map<string, number>).has(term) ? 1 / nameSize : 0);
      }
    });
    for (const [term, list] of gathered) {
      this.#postings.set(term, {
        frequency: list.counted > 0 ? list.counted : list.documents.length,
        counted: list.counted > 0,
        documents: Int32Array.from(list.documents),
        frequencies: Float64Array.from(list.frequencies),
        nameShares: Float64Array.from(list.shares),
      });
    }
    this.#scores = new Float64Array(this.#documents.length);
  }

  /** Number of tools indexed. */
  get size(): number {
    return this.#documents.length;
  }

  /**
   * The best matches for words, by BM25F plus a bonus for a name the query covers
   * (`repos_list-branches` for "list the branches of a repository" beats a longer name that only
   * contains the same words); an exact tool name ranks first; ties keep catalogue order. The best
   * 100 of those are re-scored by what the request asks for against what each tool may do and,
   * with `embeddings`, by meaning as well.
   */
  search(query: string, limit: number): ToolSearchMatch[] {
    if (limit <= 0) return [];
    const candidates = this.#keywordRank(query, Math.max(limit, rerankCandidates));
    return this.#rerank(query, candidates)
      .slice(0, limit)
      .map(({ index, score }) => this.#match(index, score));
  }

  /**
   * The share of a request's words (stop words left out, stemmed) that no tool of the catalogue
   * has in its indexed text: 0 when the catalogue's own words cover it.
   */
  #uncovered(query: string): number {
    const terms = searchTerms(query);
    if (terms.length === 0) return 0;
    let missing = 0;
    for (const term of terms) if (this.#postings.get(term) === undefined) missing++;
    return missing / terms.length;
  }

  /**
   * The tools nearest `target` in meaning that are not among `candidates` (at their keyword
   * score, 0), added to them: a pass over every tool's vector, kept as one matrix after the first.
   */
  #addNearest(target: Float32Array, candidates: Ranked[], embeddings: ToolSearchEmbeddings): void {
    const matrix = this.#meaningMatrix(embeddings, target.length);
    const taken = new Set(candidates.map(({ index }) => index));
    const nearest: Ranked[] = [];
    const dimensions = target.length;
    for (let index = 0, row = 0; index < this.#documents.length; index++, row += dimensions) {
      if (taken.has(index)) continue;
      let similarity = 0;
      for (let at = 0; at < dimensions; at++)
        similarity += (target[at] as number) * (matrix[row + at] as number);
      if (similarity <= 0) continue;
      if (nearest.length === nearestCandidates) {
        if (similarity <= (nearest[nearest.length - 1] as Ranked).score) continue;
        nearest.pop();
      }
      let at = nearest.length;
      while (at > 0 && (nearest[at - 1] as Ranked).score < similarity) at--;
      nearest.splice(at, 0, { index, score: similarity });
    }
    for (const { index } of nearest) candidates.push({ index, score: 0 });
  }

  /** Every tool's vector, one row each (zeros for a tool the embeddings know no word of). */
  #meaningMatrix(embeddings: ToolSearchEmbeddings, dimensions: number): Float32Array {
    if (this.#matrix !== undefined && this.#matrix.length === this.#documents.length * dimensions)
      return this.#matrix;
    const matrix = new Float32Array(this.#documents.length * dimensions);
    for (let index = 0; index < this.#documents.length; index++) {
      const vector = this.#toolVectors(index, embeddings, false).tool;
      if (vector !== null && vector.length === dimensions) matrix.set(vector, index * dimensions);
    }
    this.#matrix = matrix;
    return matrix;
  }

  /**
   * Keyword candidates re-scored: keyword score (1 for the best), + a bonus when what the tool
   * may do (only read, or change things) is what the request asks for; with embeddings, + weight
   * × cosine similarity and, for a question, + a lower weight × its similarity to what each tool
   * returns.
   */
  #rerank(query: string, candidates: Ranked[]): Ranked[] {
    const embeddings = this.#embeddings;
    const target = embeddings?.embed(query, this.#wordWeight);
    let meaningWeight = embeddingWeight;
    if (embeddings !== undefined && target !== undefined) {
      const uncovered = this.#uncovered(query);
      meaningWeight = embeddingWeight * (1 + uncoveredWeight * uncovered);
      if (uncovered > 0 && this.#documents.length <= nearestCatalogueSize)
        this.#addNearest(target, candidates, embeddings);
    }
    if (candidates.length === 0) return candidates;
    // The keyword score counts relative to the best match's; with no word matched (only tools
    // found by meaning) it counts nothing.
    const best = candidates[0]?.score ?? 0;
    const keyword = (score: number): number => (best > 0 ? score / best : 0);
    const question = isQuestion(query);
    const reading = question || namesReading(query);
    const rescored = candidates.map(({ index, score }) => {
      const readsOnly = this.#readsOnly(index);
      const intent = (question && readsOnly) || (!reading && !readsOnly) ? intentWeight : 0;
      if (embeddings === undefined || target === undefined)
        return { index, score: keyword(score) + intent };
      const vectors = this.#toolVectors(index, embeddings, question);
      const similarity = vectors.tool === null ? 0 : cosine(target, vectors.tool);
      const answer =
        question && vectors.answer instanceof Float32Array
          ? answerWeight * cosine(target, vectors.answer)
          : 0;
      return { index, score: keyword(score) + meaningWeight * similarity + answer + intent };
    });
    // Array.prototype.sort is stable: ties keep the keyword order.
    return rescored.sort((a, b) => b.score - a.score);
  }

  /**
   * A word's weight in an embedded text by the share of the catalogue's tools that use it (its
   * stem, as the keyword index counts it): 1 / (1 + share), so a word of every tool counts half.
   */
  readonly #wordWeight = (word: string): number => {
    let weight = this.#wordWeights.get(word);
    if (weight !== undefined) return weight;
    const term = searchTerms(word)[0];
    const found = term === undefined ? 0 : (this.#postings.get(term)?.frequency ?? 0);
    weight =
      catalogueWordWeight / (catalogueWordWeight + found / Math.max(1, this.#documents.length));
    if (this.#wordWeights.size < wordWeightCacheSize) this.#wordWeights.set(word, weight);
    return weight;
  };
  /** `#wordWeight`'s answers, by word. */
  readonly #wordWeights = new Map<string, number>();

  /** Whether a tool only reads, by its permission tier. */
  #readsOnly(index: number): boolean {
    return (this.#documents[index] as Document).tool.policy?.permission === 'read-only';
  }

  /** A candidate's vectors, its answer's only when asked for (questions); kept for later. */
  #toolVectors(index: number, embeddings: ToolSearchEmbeddings, answer: boolean): ToolVectors {
    const tool = (this.#documents[index] as Document).tool;
    let vectors = this.#vectors.get(index);
    if (vectors === undefined) {
      vectors = {
        tool: embeddings.embed(embeddingText(tool), this.#wordWeight) ?? null,
        answer: undefined,
      };
      if (this.#vectors.size < embeddingCacheSize) this.#vectors.set(index, vectors);
    }
    if (answer && vectors.answer === undefined) {
      const text = answerText(tool);
      vectors.answer = text === '' ? null : (embeddings.embed(text) ?? null);
    }
    return vectors;
  }

  /** BM25F over the fields plus the name-coverage bonus, best first (no embeddings). */
  #keywordRank(query: string, limit: number): Ranked[] {
    const terms = queryTerms(
      query,
      this.#associations,
      (term) =>
        // A word only search texts use is still one the tools' own words lack: it is expanded.
        this.#postings.get(term)?.counted === true,
    );
    const scores = this.#scores;
    const touched: number[] = [];
    const count = this.#documents.length;
    const idf = (term: string): number => {
      const found = this.#postings.get(term)?.frequency ?? 0;
      return Math.log(1 + (count - found + 0.5) / (found + 0.5));
    };
    for (const [term, { weight, source }] of terms) {
      const postings = this.#postings.get(term);
      if (postings === undefined) continue;
      const scale = weight * Math.min(idf(term), idf(source)) * (k1 + 1);
      const share = weight * nameCoverageBoost;
      const { documents, frequencies, nameShares } = postings;
      for (let at = 0; at < documents.length; at++) {
        const index = documents[at] as number;
        const frequency = frequencies[at] as number;
        if (scores[index] === 0) touched.push(index);
        scores[index] =
          (scores[index] as number) +
          (scale * frequency) / (frequency + k1) +
          share * (nameShares[at] as number);
      }
    }
    const exact = this.#byName.get(query.trim());
    if (exact !== undefined) {
      if (scores[exact] === 0) touched.push(exact);
      scores[exact] = (scores[exact] as number) + 1000;
    }
    // The top `limit` by score, then catalogue order; the scratch scores are reset as we go.
    const best: Ranked[] = [];
    for (const index of touched) {
      const score = scores[index] as number;
      scores[index] = 0;
      if (best.length === limit) {
        const last = best[best.length - 1] as { index: number; score: number };
        if (score < last.score || (score === last.score && index > last.index)) continue;
        best.pop();
      }
      let at = best.length;
      while (at > 0) {
        const previous = best[at - 1] as { index: number; score: number };
        if (previous.score > score || (previous.score === score && previous.index < index)) break;
        at--;
      }
      best.splice(at, 0, { index, score });
    }
    return best;
  }

  /**
   * Tools whose name, keywords or description match a regular expression (case-insensitive, RE2
   * syntax: linear time whatever the pattern, see `tool-search-regex.ts`). Rejects with an `Error`
   * saying what is wrong with a pattern that does not compile.
   */
  async searchRegex(pattern: string, limit: number): Promise<ToolSearchMatch[]> {
    const matches = await compileSearchPattern(pattern);
    const found: ToolSearchMatch[] = [];
    this.#documents.forEach((document, index) => {
      // A name match ranks above a match in the description; ties keep catalogue order.
      if (matches(document.tool.name)) found.push(this.#match(index, 2));
      else if (matches(document.text)) found.push(this.#match(index, 1));
    });
    return found.sort((a, b) => b.score - a.score).slice(0, limit);
  }

  #match(index: number, score: number): ToolSearchMatch {
    const tool = (this.#documents[index] as Document).tool;
    return { name: tool.name, summary: toolSummary(tool.description), score };
  }
}
