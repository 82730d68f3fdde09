/**
 * The textbook baseline the issue compares against: Okapi BM25 (k1 1.2, b 0.75) over each tool's
 * name and description as one field, words split on non-alphanumerics and camelCase and
 * lower-cased — no stemming, stop words, synonyms or boosts.
 */
import type { Ranker } from './evaluate.js';

function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '');
}

/** Plain BM25 over name + description. */
export const bm25Baseline: Ranker = (tools) => {
  const documents = tools.map((tool) => {
    const frequencies = new Map<string, number>();
    const terms = words(`${tool.name} ${tool.description}`);
    for (const term of terms) frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
    return { name: tool.name, frequencies, length: terms.length };
  });
  const average =
    documents.reduce((sum, doc) => sum + doc.length, 0) / Math.max(1, documents.length);
  const containing = new Map<string, number>();
  for (const doc of documents)
    for (const term of doc.frequencies.keys())
      containing.set(term, (containing.get(term) ?? 0) + 1);
  const k1 = 1.2;
  const b = 0.75;
  return (query, limit) => {
    const terms = [...new Set(words(query))];
    const scored = documents.map((doc, index) => {
      let score = 0;
      for (const term of terms) {
        const frequency = doc.frequencies.get(term);
        if (frequency === undefined) continue;
        const found = containing.get(term) ?? 0;
        const idf = Math.log(1 + (documents.length - found + 0.5) / (found + 0.5));
        score +=
          (idf * frequency * (k1 + 1)) / (frequency + k1 * (1 - b + (b * doc.length) / average));
      }
      return { index, score };
    });
    return scored
      .filter((entry) => entry.score > 0)
      .sort((x, y) => y.score - x.score || x.index - y.index)
      .slice(0, limit)
      .map((entry) => documents[entry.index]?.name ?? '');
  };
};
