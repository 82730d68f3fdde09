/**
 * Bench suite for context compaction (`@agent/core`, issue 30): one long scripted coding session
 * — a model that reads a file per turn (~3k tokens each) across several prompts — run twice with
 * the same decisions, without and with compaction, on a 64k-token window. It counts what is sent
 * to the model (tokens estimated as characters / 4 of every request: system prompt, tool
 * definitions, messages — the summary calls included), the largest request, how many requests
 * would not fit the window (a real provider refuses those), model calls and compactions.
 */
import {
  Agent,
  type CompactionOptions,
  defineTool,
  estimateRequestTokens,
  type ProviderRequest,
} from '@agent/core';
import { createScriptedProvider, type ScriptedTurn } from '@agent/core/testing';
import * as z from 'zod';
import { type BenchSection, positiveInt } from '../types.js';

const window = 64_000;
const prompts = 4;
const turnsPerPrompt = positiveInt(process.env.BENCH_COMPACTION_TURNS, 25);

/** A source file of ~12,000 characters whose first line names it. */
function source(n: number): string {
  const lines = [`// src/module-${n}.ts`];
  for (let line = 0; lines.join('\n').length < 12_000; line++)
    lines.push(
      `export function step${n}_${line}(input: number): number { return input * ${line} + ${n}; }`,
    );
  return lines.join('\n');
}

const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a file of the workspace',
  input: z.object({ path: z.string() }),
  policy: { permission: 'read-only', pathAccess: 'read' },
  execute: async ({ path }) => source(Number(/\d+/.exec(path)?.[0] ?? 0)),
});

const isSummary = (request: ProviderRequest) =>
  request.tools === undefined && request.systemPrompt?.includes('working memory') === true;

/** The session's model: reads `turnsPerPrompt` files per prompt, then answers; summaries on request. */
function model() {
  let read = 0;
  let inPrompt = 0;
  return (request: ProviderRequest): ScriptedTurn => {
    // Reported usage, as a real provider's: what the request holds.
    const usage = { input: estimateRequestTokens(request), output: 60 };
    if (isSummary(request))
      return {
        text: `## Goal\nReview every module.\n## Files\n${'- src/module-N.ts: read, pure arithmetic helpers\n'.repeat(40)}## Open tasks\nRead the remaining modules.`,
        usage: { ...usage, output: 800 },
      };
    if (inPrompt < turnsPerPrompt) {
      inPrompt++;
      read++;
      return {
        text: `Reading module ${read}.`,
        toolCalls: [{ name: 'read_file', arguments: { path: `src/module-${read}.ts` } }],
        usage,
      };
    }
    inPrompt = 0;
    return { text: `Reviewed ${read} modules so far.`, usage };
  };
}

interface Measured {
  calls: number;
  sent: number;
  largest: number;
  overWindow: number;
  compactions: number;
  summaryOutput: number;
  stopReasons: string[];
}

async function session(compaction: CompactionOptions | false): Promise<Measured> {
  const provider = createScriptedProvider([model()], {
    whenExhausted: 'repeat-last',
    contextWindow: window,
  });
  const agent = new Agent({
    provider,
    model: 'bench-model',
    systemPrompt: 'You review the modules of a TypeScript project, one file at a time.',
    tools: [readFile],
    compaction,
    maxTurns: turnsPerPrompt + 5,
  });
  const stopReasons: string[] = [];
  for (let prompt = 1; prompt <= prompts; prompt++)
    stopReasons.push(
      (await agent.run(`Review the next ${turnsPerPrompt} modules.`).result).stopReason,
    );
  const sizes = provider.requests.map(estimateRequestTokens);
  return {
    calls: provider.requests.length,
    sent: sizes.reduce((sum, size) => sum + size, 0),
    largest: Math.max(...sizes),
    overWindow: sizes.filter((size) => size > window).length,
    compactions: agent.compactions.length,
    summaryOutput: agent.compactions.reduce((sum, item) => sum + item.usage.output, 0),
    stopReasons,
  };
}

const thousands = (tokens: number) => `${(tokens / 1000).toFixed(0)}k`;

export async function run(): Promise<BenchSection> {
  const without = await session(false);
  const withCompaction = await session({});
  const row = (name: string, measured: Measured): string[] => [
    name,
    String(measured.calls),
    thousands(measured.sent),
    thousands(measured.largest),
    String(measured.overWindow),
    String(measured.compactions),
    measured.summaryOutput === 0 ? '—' : thousands(measured.summaryOutput),
  ];
  const saved = 1 - withCompaction.sent / without.sent;
  return {
    title: 'compaction: tokens sent over a long session',
    columns: [
      'Session',
      'Model calls',
      'Tokens sent',
      'Largest request',
      `Requests over the ${thousands(window)} window`,
      'Compactions',
      'Summary output',
    ],
    rows: [row('without compaction', without), row('with compaction (defaults)', withCompaction)],
    notes: [
      `${prompts} prompts × ${turnsPerPrompt} turns, each reading a ~3k-token file (BENCH_COMPACTION_TURNS); the same model decisions both ways; tokens are characters / 4 of every request (summary calls included).`,
      `With compaction: ${(saved * 100).toFixed(0)}% fewer tokens sent, and no request past the window; without it, every request past the window is one a real provider refuses (the run would end there).`,
      `Stop reasons — without: ${without.stopReasons.join(', ')}; with: ${withCompaction.stopReasons.join(', ')}.`,
    ],
  };
}
