/**
 * Word embeddings for `tool_search`: a text's vector is the weighted mean of its words' vectors
 * (smooth inverse frequency: "the" counts for less than "refund"), of unit length. The vectors
 * are GloVe's, fine-tuned on API documents (100 dimensions, int8 with a scale per word), kept
 * for frequent English words and the words API documents use; see
 * `bench/src/tool-search/build-search-embeddings.ts` and `fine-tune-embeddings.ts` beside it.
 */
import type { ToolSearchEmbeddings } from '@agent/core';

// Words that say nothing about which tool; the weights already discount frequent words, these
// would still pull every text towards the same corner.
const stopWords = new Set(
  'a an and are as at be by can could did do does for from get has have how i in into is it its me my of on or our should so some that the their them then there they this to us use used using via was we what when which will with would you your'.split(
    ' ',
  ),
);

function decode(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let at = 0; at < binary.length; at++) bytes[at] = binary.charCodeAt(at);
  return bytes;
}

/** Word vectors and the text embedding built from them. */
export class WordEmbeddings implements ToolSearchEmbeddings {
  readonly #rows = new Map<string, number>();
  readonly #vectors: Int8Array;
  readonly #scales: Float32Array;
  readonly #weights: Uint8Array;
  /** Dimensions of every vector. */
  readonly dimensions: number;

  constructor(data: {
    dimensions: number;
    words: string;
    vectors: string;
    scales: string;
    weights: string;
  }) {
    this.dimensions = data.dimensions;
    data.words.split('\n').forEach((word, row) => {
      this.#rows.set(word, row);
    });
    const vectorBytes = decode(data.vectors);
    this.#vectors = new Int8Array(vectorBytes.buffer, vectorBytes.byteOffset, vectorBytes.length);
    const scaleBytes = decode(data.scales);
    this.#scales = new Float32Array(
      scaleBytes.buffer,
      scaleBytes.byteOffset,
      scaleBytes.length / 4,
    );
    this.#weights = decode(data.weights);
    const count = this.#rows.size;
    if (
      this.#vectors.length !== count * this.dimensions ||
      this.#scales.length !== count ||
      this.#weights.length !== count
    )
      throw new Error(
        `Tool search embeddings: ${count} words but ${this.#vectors.length / this.dimensions} vectors, ${this.#scales.length} scales, ${this.#weights.length} weights`,
      );
  }

  /** Number of words with a vector. */
  get size(): number {
    return this.#rows.size;
  }

  /** The row of a word, or of its singular ("invoices" → "invoice"). */
  #row(word: string): number | undefined {
    return (
      this.#rows.get(word) ?? (word.endsWith('s') ? this.#rows.get(word.slice(0, -1)) : undefined)
    );
  }

  /**
   * The unit-length mean of the text's known words, weighted (by their frequency in English and,
   * given `wordWeight`, by its factor for each word); `undefined` when none is known.
   */
  embed(text: string, wordWeight?: (word: string) => number): Float32Array | undefined {
    const sum = new Float32Array(this.dimensions);
    let known = 0;
    const spaced = text
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      // One capital looked at per position (`([A-Z]+)([A-Z][a-z])` was quadratic on a run of them).
      .replace(/([A-Z])(?=[A-Z][a-z])/g, '$1 ')
      .toLowerCase();
    for (const word of spaced.split(/[^a-z0-9]+/)) {
      if (word.length < 2 || stopWords.has(word) || /^\d+$/.test(word)) continue;
      const row = this.#row(word);
      if (row === undefined) continue;
      known++;
      const factor =
        ((this.#weights[row] as number) / 255) *
        (this.#scales[row] as number) *
        (wordWeight === undefined ? 1 : wordWeight(word));
      const offset = row * this.dimensions;
      for (let at = 0; at < this.dimensions; at++)
        sum[at] = (sum[at] as number) + factor * (this.#vectors[offset + at] as number);
    }
    if (known === 0) return undefined;
    let norm = 0;
    for (const value of sum) norm += value * value;
    norm = Math.sqrt(norm);
    if (norm === 0) return undefined;
    for (let at = 0; at < this.dimensions; at++) sum[at] = (sum[at] as number) / norm;
    return sum;
  }
}
