/**
 * `@agent/tool-search-data`: word associations for `tool_search`, learned offline (WordNet 3.1's
 * synonyms, derived forms, hypernyms and definitions, kept where API documentation uses the
 * associate). Pass them to the search to find tools for requests in the user's own words:
 *
 * ```ts
 * new Agent({ …, toolSearch: { associations: toolSearchAssociations() } });
 * ```
 */
import { ToolSearchAssociations } from '@agent/core';
import { associationsText } from './associations.generated.js';

let parsed: ToolSearchAssociations | undefined;

/** The associations, parsed on first use (~32k words, ~0.1 s) and shared afterwards. */
export function toolSearchAssociations(): ToolSearchAssociations {
  parsed ??= ToolSearchAssociations.parse(associationsText);
  return parsed;
}
