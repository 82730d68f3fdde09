import { Agent, defineTool } from '@agent/core';
import { createScriptedProvider, type ScriptedTurn } from '@agent/core/testing';
import type { Implementation } from './implementation.js';
import {
  checkRun,
  finalText,
  noopInput,
  overheadScript,
  parallelCalls,
  parallelScript,
  parallelWaitMs,
  probe,
  totalCalls,
  type WorkloadCall,
  wait,
} from './workload.js';

function toScript(script: readonly (readonly WorkloadCall[])[]): ScriptedTurn[] {
  return [
    ...script.map((calls) => ({ toolCalls: calls.map((call) => ({ ...call })) })),
    { text: finalText },
  ];
}

const overheadTurns = toScript(overheadScript);
const parallelTurns = toScript(parallelScript);

const noop = defineTool({
  name: 'noop',
  description: 'Does nothing.',
  input: noopInput,
  execute: async (args) => {
    probe.hit(args);
    return 'ok';
  },
});

const waitTool = defineTool({
  name: 'wait',
  description: 'Waits 100 ms.',
  input: noopInput,
  execute: async (args) => {
    probe.hit(args);
    await wait(parallelWaitMs);
    return 'ok';
  },
});

async function run(turns: ScriptedTurn[], expectedCalls: number): Promise<Agent> {
  const agent = new Agent({
    provider: createScriptedProvider(turns, { recordRequests: false }),
    model: 'bench',
    tools: [noop, waitTool],
    maxTurns: turns.length,
  });
  const result = await agent.run('go').result;
  if (result.stopReason !== 'completed')
    throw new Error(`@agent/core: run ended with ${result.stopReason} ${result.error ?? ''}`);
  const last = result.finalMessage?.content.find((block) => block.type === 'text');
  checkRun('@agent/core', expectedCalls, last?.type === 'text' ? last.text : undefined);
  return agent;
}

/** `Agent` from `@agent/core` with `createScriptedProvider` (zero latency, no request recording). */
export const ours: Implementation = {
  label: '@agent/core (ours)',
  packageName: '@agent/core',
  runOverhead: () => run(overheadTurns, totalCalls),
  runParallel: () => run(parallelTurns, parallelCalls),
};
