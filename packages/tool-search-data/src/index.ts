/**
 * `@agent/tool-search-data`: data for `tool_search`, learned offline — word associations
 * (WordNet 3.1's synonyms, derived forms, hypernyms and definitions, kept where API
 * documentation uses the associate, and an intent lexicon of the user's phrasings: "nuke" →
 * delete, "money back" → refund) and word embeddings (GloVe, fine-tuned on API documents). Pass them to the search to find
 * tools for requests in the user's own words:
 *
 * ```ts
 * new Agent({
 *   …,
 *   toolSearch: { associations: toolSearchAssociations(), embeddings: toolSearchEmbeddings() },
 * });
 * ```
 */
import { ToolSearchAssociations } from '@agent/core';
import { associationsText } from './associations.generated.js';
import * as embeddingsData from './embeddings.generated.js';
import { WordEmbeddings } from './embeddings.js';

export { WordEmbeddings } from './embeddings.js';

let parsed: ToolSearchAssociations | undefined;

/** The associations, parsed on first use (~33k words, ~0.1 s) and shared afterwards. */
export function toolSearchAssociations(): ToolSearchAssociations {
  parsed ??= ToolSearchAssociations.parse(associationsText);
  return parsed;
}

let embeddings: WordEmbeddings | undefined;

/**
 * The word embeddings (~22k words × 100 dimensions, int8), decoded on first use (~10 MB of heap)
 * and shared afterwards.
 */
export function toolSearchEmbeddings(): WordEmbeddings {
  embeddings ??= new WordEmbeddings(embeddingsData);
  return embeddings;
}
