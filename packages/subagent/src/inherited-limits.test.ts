// A parent's per-run limits bound its children: a child's own options (or an app's sub-agent
// options, or an agent file's) may set tighter ones, never looser ones. And a whole-tree cap on
// tool calls (`budget.maxToolCalls`) counts the children's calls with the parent's. Through the
// real loop.
import { Agent, type AgentOptions, defineTool } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createSubAgentTool } from './index.js';
import {
  addTool,
  blockTool,
  delegatingParent,
  detailsOf,
  resultFor,
  text,
  toolResults,
} from './test-helpers.js';

/** A child that asks for `count` adds in one turn, then answers. */
function manyAddsChild(count: number) {
  return createScriptedProvider([
    {
      toolCalls: Array.from({ length: count }, (_, index) => ({
        name: 'add',
        arguments: { a: index, b: 1 },
      })),
    },
    { text: 'done' },
  ]);
}

/** A child that calls `add` once per turn for ever (until a limit stops it). */
function endlessChild() {
  return createScriptedProvider(
    Array.from({ length: 200 }, (_, index) => ({
      toolCalls: [{ name: 'add', arguments: { a: index, b: 1 } }],
    })),
  );
}

type ChildLimits = Pick<AgentOptions, 'maxToolCallsPerTurn' | 'toolTimeoutMs' | 'maxTurns'>;
type ParentLimits = ChildLimits & Pick<AgentOptions, 'budget'>;

async function runTree(options: {
  child: ReturnType<typeof createScriptedProvider>;
  childLimits?: ChildLimits;
  parentLimits: ParentLimits;
  childTools?: Parameters<typeof createSubAgentTool>[0]['tools'];
}) {
  const helper = createSubAgentTool({
    name: 'helper',
    description: 'Helps.',
    provider: options.child,
    model: 'child',
    tools: options.childTools ?? [addTool],
    includeMessages: true,
    // The sub-agent call itself is not cut by the parent's default timeout under test.
    policy: { timeoutMs: 60_000 },
    ...options.childLimits,
  });
  const parent = new Agent({
    provider: delegatingParent('helper', 'work'),
    model: 'parent',
    tools: [helper],
    ...options.parentLimits,
  });
  const result = await parent.run('go').result;
  const call = resultFor(result, 'call_sub');
  return { result, call, childMessages: detailsOf(call).messages ?? [] };
}

describe("the parent's maxToolCallsPerTurn", () => {
  it.each([
    ['the child sets none', undefined, 2],
    ['the child asks for more', 50, 2],
    ['the child asks for Infinity', Number.POSITIVE_INFINITY, 2],
    ['the child sets a tighter one', 1, 1],
  ])('applies to a child when %s', async (_case, childCap, ran) => {
    const { childMessages } = await runTree({
      child: manyAddsChild(5),
      childLimits: childCap === undefined ? {} : { maxToolCallsPerTurn: childCap },
      parentLimits: { maxToolCallsPerTurn: 2 },
    });
    const results = toolResults(childMessages);
    expect(results).toHaveLength(5);
    expect(results.filter((message) => message.isError !== true)).toHaveLength(ran);
    expect(text(results[4])).toContain('(maxToolCallsPerTurn)');
  });
});

describe("the parent's toolTimeoutMs", () => {
  it.each([
    ['the child sets none', undefined],
    ['the child asks for an hour', 3_600_000],
  ])('stops a child’s call when %s', async (_case, childTimeout) => {
    let cancelled = false;
    const { childMessages, result } = await runTree({
      child: createScriptedProvider([
        { toolCalls: [{ name: 'block', arguments: {} }] },
        { text: 'gave up' },
      ]),
      childLimits: childTimeout === undefined ? {} : { toolTimeoutMs: childTimeout },
      parentLimits: { toolTimeoutMs: 100 },
      childTools: [
        blockTool((signal) =>
          signal.addEventListener('abort', () => {
            cancelled = true;
          }),
        ),
      ],
    });
    const [blocked] = toolResults(childMessages);
    expect(blocked?.isError).toBe(true);
    expect(text(blocked)).toContain('Tool exceeded timeout of 100');
    expect(cancelled).toBe(true);
    expect(result.stopReason).toBe('completed');
  });

  it('a tighter child timeout holds inside a looser parent', async () => {
    const { childMessages } = await runTree({
      child: createScriptedProvider([
        { toolCalls: [{ name: 'block', arguments: {} }] },
        { text: 'gave up' },
      ]),
      childLimits: { toolTimeoutMs: 60 },
      parentLimits: { toolTimeoutMs: 3_600_000 },
      childTools: [blockTool(() => undefined)],
    });
    expect(text(toolResults(childMessages)[0])).toContain('Tool exceeded timeout of 60');
  });
});

describe("the parent's maxTurns", () => {
  it.each([
    ['the child sets none', undefined],
    ['the child asks for 1,000', 1_000],
  ])('bounds a child’s turns when %s', async (_case, childTurns) => {
    const { call } = await runTree({
      child: endlessChild(),
      childLimits: childTurns === undefined ? {} : { maxTurns: childTurns },
      parentLimits: { maxTurns: 3 },
    });
    expect(detailsOf(call).turns).toBe(3);
    expect(text(call)).toContain('maxTurns');
  });
});

describe('budget.maxToolCalls: the whole tree', () => {
  it("counts a child's calls with the parent's, and stops both runs", async () => {
    let ran = 0;
    const counting = defineTool({
      name: 'add',
      description: 'Adds.',
      input: z.object({ a: z.number(), b: z.number() }),
      policy: { permission: 'read-only' },
      execute: async ({ a, b }) => {
        ran++;
        return String(a + b);
      },
    });
    const { result, childMessages } = await runTree({
      child: endlessChild(),
      parentLimits: { budget: { maxToolCalls: 5 } },
      childTools: [counting],
    });
    // The parent's own call of the sub-agent counts: four adds ran, the fifth was refused.
    expect(ran).toBe(4);
    const refused = toolResults(childMessages).at(-1);
    expect(text(refused)).toContain('the budget of 5 tool calls');
    expect(result.stopReason).toBe('budget-exhausted');
    expect(result.budgetReason).toContain('5 tool calls');
  });

  it('fan-out: three children at once never run more than the cap together', async () => {
    let ran = 0;
    const counting = defineTool({
      name: 'add',
      description: 'Adds.',
      input: z.object({ a: z.number(), b: z.number() }),
      policy: { permission: 'read-only' },
      execute: async ({ a, b }) => {
        ran++;
        return String(a + b);
      },
    });
    const helper = createSubAgentTool({
      name: 'helper',
      description: 'Helps.',
      provider: createScriptedProvider(
        Array.from({ length: 60 }, () => ({
          toolCalls: Array.from({ length: 4 }, (_, index) => ({
            name: 'add',
            arguments: { a: index, b: 1 },
          })),
        })),
      ),
      model: 'child',
      tools: [counting],
    });
    const parent = new Agent({
      provider: createScriptedProvider([
        {
          toolCalls: ['a', 'b', 'c'].map((id) => ({
            id,
            name: 'helper',
            arguments: { task: id },
          })),
        },
        { text: 'over' },
      ]),
      model: 'parent',
      tools: [helper],
      budget: { maxToolCalls: 20 },
    });
    const result = await parent.run('go').result;
    // 3 sub-agent calls + 17 adds = 20.
    expect(ran).toBe(17);
    expect(result.stopReason).toBe('budget-exhausted');
  });

  it('a child’s own tighter maxTurns holds inside a looser parent and tree cap', async () => {
    const { childMessages, result } = await runTree({
      child: endlessChild(),
      parentLimits: { budget: { maxToolCalls: 1_000 }, maxTurns: 50 },
      childLimits: { maxTurns: 2 },
    });
    expect(toolResults(childMessages)).toHaveLength(2);
    expect(result.stopReason).toBe('completed');
  });
});
