// Kiro's shapes start several sub-agents in one call (InvokeSubagents, a crew's stages). Nested
// runs do not count toward the model's per-turn cap, so the call itself must: a parent allowed
// two calls a turn must not start fifty children through one. And the reports of many children
// together must fit the same report budget as one child's, or one call fills the parent's context.
import { Agent, messageText } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import { createAgentTool, createSubAgentTool } from './index.js';
import { toolResults } from './test-helpers.js';

/** One sub-agent whose every run answers `answer`; `runs` counts its child runs. */
function wordyAgent(answer: string) {
  const counter = { runs: 0 };
  const provider = createScriptedProvider(
    [
      () => {
        counter.runs += 1;
        return { text: answer };
      },
    ],
    { whenExhausted: 'repeat-last' },
  );
  const agent = createSubAgentTool({
    name: 'general',
    description: 'Does it.',
    provider,
    model: 'm',
  });
  return { tool: createAgentTool({ agents: [agent] }), counter };
}

async function callOnce(
  tool: ReturnType<typeof createAgentTool>,
  name: string,
  args: Record<string, unknown>,
  maxToolCallsPerTurn?: number,
) {
  const parent = createScriptedProvider([
    { toolCalls: [{ id: 'call', name, arguments: args }] },
    { text: 'done' },
  ]);
  const result = await new Agent({
    provider: parent,
    model: 'm',
    tools: [tool],
    ...(maxToolCallsPerTurn === undefined ? {} : { maxToolCallsPerTurn }),
  }).run('go').result;
  const [first] = toolResults(result.messages);
  return first;
}

const invoke = (count: number) => ({
  command: 'InvokeSubagents',
  content: { subagents: Array.from({ length: count }, (_, i) => ({ query: `part ${i}` })) },
});

const crew = (count: number) => ({
  task: 'the task',
  stages: Array.from({ length: count }, (_, i) => ({
    name: `s${i}`,
    role: 'general',
    prompt_template: '{task}',
  })),
});

describe("Kiro's multi-agent calls", () => {
  it.each([
    ['use_subagent', invoke(5)],
    ['agent_crew', crew(5)],
  ])(
    '%s: more runs than the parent may make calls a turn are refused, none started',
    async (name, args) => {
      const { tool, counter } = wordyAgent('ok');
      const result = await callOnce(tool, name, args, 2);
      expect(result?.isError).toBe(true);
      expect(result === undefined ? '' : messageText(result)).toMatch(/at most 2/);
      expect(counter.runs).toBe(0);
    },
  );

  it.each([
    ['use_subagent', invoke(100)],
    ['agent_crew', crew(100)],
  ])(
    '%s: a hundred runs in one call are refused without a per-turn cap too',
    async (name, args) => {
      const { tool, counter } = wordyAgent('ok');
      const result = await callOnce(tool, name, args);
      expect(result?.isError).toBe(true);
      expect(counter.runs).toBe(0);
    },
  );

  it.each([
    ['use_subagent', invoke(8)],
    ['agent_crew', crew(8)],
  ])(
    '%s: eight reports of 30,000 characters reach the parent within one report budget',
    async (name, args) => {
      const { tool, counter } = wordyAgent(`start ${'x'.repeat(30_000)} end`);
      const result = await callOnce(tool, name, args);
      expect(counter.runs).toBe(8);
      const text = result === undefined ? '' : messageText(result);
      expect(text.length).toBeLessThan(42_000);
      // Every child's report is still there, each with its start and its end.
      expect(text.split('start ')).toHaveLength(9);
      expect(text.split(' end')).toHaveLength(9);
    },
  );
});
