/**
 * The search behind `tool_search`: BM25 over what a tool is called and does (its name split
 * into words, description, keywords such as tags or an HTTP path, and parameter names), plus a
 * regex mode. No service, no model: deterministic (ties keep catalogue order), built once per
 * catalogue.
 */
import type { JsonSchema } from './json-schema.js';
import type { AnyAgentTool } from './tool.js';

/** One match of a search. */
export interface ToolSearchMatch {
  name: string;
  /** The first sentence (or line) of the description, at most 160 characters. */
  summary: string;
  score: number;
}

interface Field {
  weight: number;
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
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
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
function parameterNames(schema: JsonSchema, depth = 0, out: string[] = []): string[] {
  if (depth > 1 || typeof schema !== 'object' || schema === null) return out;
  const properties = (schema as { properties?: unknown }).properties;
  if (typeof properties === 'object' && properties !== null) {
    for (const [name, sub] of Object.entries(properties)) {
      out.push(name);
      parameterNames(sub as JsonSchema, depth + 1, out);
    }
  }
  return out;
}

/** The one-line summary shown for a match. */
export function toolSummary(description: string): string {
  const firstLine = description.trim().split('\n')[0] ?? '';
  const sentence = /^(.+?[.!?])(\s|$)/.exec(firstLine)?.[1] ?? firstLine;
  return sentence.length > 160 ? `${sentence.slice(0, 159)}…` : sentence;
}

const fields: Field[] = [
  { weight: 3, text: (tool) => `${tool.name} ${tool.label ?? ''}` },
  { weight: 2, text: (tool) => (tool.keywords ?? []).join(' ') },
  { weight: 1, text: (tool) => tool.description },
  { weight: 0.5, text: (tool) => parameterNames(tool.parameters).join(' ') },
];

// BM25 parameters: the usual term-frequency saturation and length normalisation.
const k1 = 1.2;
const b = 0.75;

interface Document {
  tool: AnyAgentTool;
  /** Weighted term frequencies over all fields. */
  frequencies: Map<string, number>;
  length: number;
  /** For regex mode: name, keywords and description. */
  text: string;
}

/** An index over a catalogue of tools; build once, query many times. */
export class ToolSearchIndex {
  readonly #documents: Document[] = [];
  readonly #postings = new Map<string, number[]>();
  readonly #averageLength: number;

  constructor(tools: Iterable<AnyAgentTool>) {
    let total = 0;
    for (const tool of tools) {
      const frequencies = new Map<string, number>();
      let length = 0;
      for (const field of fields) {
        for (const term of searchTerms(field.text(tool))) {
          frequencies.set(term, (frequencies.get(term) ?? 0) + field.weight);
          length += field.weight;
        }
      }
      const index = this.#documents.length;
      for (const term of frequencies.keys()) {
        const list = this.#postings.get(term);
        if (list === undefined) this.#postings.set(term, [index]);
        else list.push(index);
      }
      this.#documents.push({
        tool,
        frequencies,
        length,
        text: `${tool.name}\n${(tool.keywords ?? []).join(' ')}\n${tool.description}`,
      });
      total += length;
    }
    this.#averageLength = this.#documents.length === 0 ? 1 : total / this.#documents.length;
  }

  /** Number of tools indexed. */
  get size(): number {
    return this.#documents.length;
  }

  /** The best matches for words, by BM25; ties keep catalogue order. */
  search(query: string, limit: number): ToolSearchMatch[] {
    const terms = [...new Set(searchTerms(query))];
    const scores = new Map<number, number>();
    const count = this.#documents.length;
    for (const term of terms) {
      const postings = this.#postings.get(term);
      if (postings === undefined) continue;
      const idf = Math.log(1 + (count - postings.length + 0.5) / (postings.length + 0.5));
      for (const index of postings) {
        const document = this.#documents[index] as Document;
        const frequency = document.frequencies.get(term) ?? 0;
        const norm = k1 * (1 - b + (b * document.length) / this.#averageLength);
        const score = (idf * (frequency * (k1 + 1))) / (frequency + norm);
        scores.set(index, (scores.get(index) ?? 0) + score);
      }
    }
    // An exact tool name in the query is what the model wants.
    const exact = this.#documents.findIndex((document) => document.tool.name === query.trim());
    if (exact >= 0) scores.set(exact, (scores.get(exact) ?? 0) + 1000);
    return [...scores]
      .sort(([a, scoreA], [b, scoreB]) => scoreB - scoreA || a - b)
      .slice(0, limit)
      .map(([index, score]) => this.#match(index, score));
  }

  /** Tools whose name, keywords or description match a regular expression (case-insensitive). */
  searchRegex(pattern: string, limit: number): ToolSearchMatch[] {
    const regex = new RegExp(pattern, 'iu');
    const found: ToolSearchMatch[] = [];
    this.#documents.forEach((document, index) => {
      // A name match ranks above a match in the description; ties keep catalogue order.
      if (regex.test(document.tool.name)) found.push(this.#match(index, 2));
      else if (regex.test(document.text)) found.push(this.#match(index, 1));
    });
    return found.sort((a, b) => b.score - a.score).slice(0, limit);
  }

  #match(index: number, score: number): ToolSearchMatch {
    const tool = (this.#documents[index] as Document).tool;
    return { name: tool.name, summary: toolSummary(tool.description), score };
  }
}
