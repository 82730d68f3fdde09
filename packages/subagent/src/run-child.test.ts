import { Agent, type AgentEvent, defineTool } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createSubAgentTool, isSubAgentUpdateDetails } from './index.js';
import {
  addingChild,
  addTool,
  delegatingParent,
  detailsOf,
  eventsOfType,
  firstUserText,
  lastToolResult,
  resultFor,
  text,
} from './test-helpers.js';

describe("createSubAgentTool: a child's failures, events and structured results", () => {
  it('reports a child that hits max-turns as an isError result with what it said so far', async () => {
    const worker = createSubAgentTool({
      name: 'worker',
      description: 'Works.',
      provider: createScriptedProvider([
        { text: 'Found half of it: 21.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
      ]),
      model: 'm',
      tools: [addTool],
      maxTurns: 1,
    });
    const parentProvider = delegatingParent('worker', 'find it');
    const parent = new Agent({ provider: parentProvider, model: 'm', tools: [worker] });
    const result = await parent.run('go').result;

    expect(result.stopReason).toBe('completed');
    const subResult = resultFor(result, 'call_sub');
    expect(subResult).toMatchObject({ isError: true, errorKind: 'failed' });
    expect(text(subResult)).toBe(
      'Sub-agent "worker" did not finish: it reached its limit of 1 turns (maxTurns).\n' +
        'What it had said so far:\n\nFound half of it: 21.',
    );
    expect(detailsOf(subResult)).toMatchObject({ stopReason: 'max-turns', turns: 1, toolCalls: 1 });
    // The parent's model read the failure.
    expect(lastToolResult(parentProvider.requests[1] ?? { model: '', messages: [] })).toMatchObject(
      { isError: true, childLoopId: subResult?.childLoopId },
    );
  });

  it('clips a long partial text in a failed result', async () => {
    const worker = createSubAgentTool({
      name: 'worker',
      description: 'Works.',
      provider: createScriptedProvider(
        [
          {
            text: `start ${'x'.repeat(50_000)} end`,
            toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }],
          },
        ],
        { chunkSize: 10_000 },
      ),
      model: 'm',
      tools: [addTool],
      maxTurns: 1,
    });
    const parent = new Agent({
      provider: delegatingParent('worker', 'find it'),
      model: 'm',
      tools: [worker],
    });
    const result = await parent.run('go').result;
    const said = text(resultFor(result, 'call_sub'));
    expect(said).toContain('What it had said so far:\n\nstart xxx');
    expect(said).toContain('characters clipped');
    expect(said.endsWith('x end')).toBe(true);
    expect(said.length).toBeLessThan(21_000);
  });

  it('reports a child whose model fails as an isError result with the error and the partial text', async () => {
    const worker = createSubAgentTool({
      name: 'worker',
      description: 'Works.',
      provider: createScriptedProvider([
        { text: 'Partial finding A.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
        { text: 'and then', error: { message: 'upstream overloaded', statusCode: 400 } },
      ]),
      model: 'm',
      tools: [addTool],
    });
    const parent = new Agent({
      provider: delegatingParent('worker', 'find it'),
      model: 'm',
      tools: [worker],
    });
    const result = await parent.run('go').result;
    const subResult = resultFor(result, 'call_sub');
    expect(subResult?.isError).toBe(true);
    expect(text(subResult)).toContain('did not finish: it failed: ');
    expect(text(subResult)).toContain('upstream overloaded');
    expect(text(subResult)).toContain('What it had said so far:\n\nPartial finding A.');
    expect(detailsOf(subResult).stopReason).toBe('error');
    expect(detailsOf(subResult).error).toContain('upstream overloaded');
  });

  it('streams child events as updates and progress carrying childLoopId, never to the parent model', async () => {
    const worker = createSubAgentTool({
      name: 'worker',
      description: 'Adds.',
      provider: addingChild(),
      model: 'm',
      tools: [addTool],
    });
    const parentProvider = delegatingParent('worker', 'add');
    const parent = new Agent({ provider: parentProvider, model: 'm', tools: [worker] });
    const events: AgentEvent[] = [];
    parent.subscribe((event) => events.push(event));
    const result = await parent.run('go').result;
    const subResult = resultFor(result, 'call_sub');
    const childLoopId = subResult?.childLoopId;

    const updates = eventsOfType(events, 'tool-execution-update');
    expect(updates.length).toBeGreaterThan(5);
    const forwarded = updates.map(({ partial, toolCallId }) => {
      expect(toolCallId).toBe('call_sub');
      expect(partial.childLoopId).toBe(childLoopId);
      if (!isSubAgentUpdateDetails(partial.details)) throw new Error('expected update details');
      expect(partial.details.childLoopId).toBe(childLoopId);
      return partial.details.event.type;
    });
    for (const type of [
      'agent-start',
      'turn-start',
      'message-update',
      'tool-execution-start',
      'tool-execution-end',
      'turn-end',
    ] as const) {
      expect(forwarded).toContain(type);
    }
    expect(eventsOfType(events, 'progress').map((event) => event.text)).toEqual([
      'turn 1: thinking',
      'turn 1: running add',
      'turn 2: thinking',
    ]);
    const sent = JSON.stringify(parentProvider.requests);
    expect(sent).not.toContain('agent-start');
    expect(sent).not.toContain('message-update');
    expect(
      lastToolResult(parentProvider.requests[1] ?? { model: '', messages: [] })?.content,
    ).toEqual([{ type: 'text', text: 'The sum is 5.' }]);
  });

  it('forwards only the events forwardEvent accepts', async () => {
    const worker = createSubAgentTool({
      name: 'worker',
      description: 'Adds.',
      provider: addingChild(),
      model: 'm',
      tools: [addTool],
      forwardEvent: (event) => event.type === 'tool-execution-end',
    });
    const parent = new Agent({
      provider: delegatingParent('worker', 'add'),
      model: 'm',
      tools: [worker],
    });
    const events: AgentEvent[] = [];
    parent.subscribe((event) => events.push(event));
    await parent.run('go').result;
    const types = eventsOfType(events, 'tool-execution-update').map((event) =>
      isSubAgentUpdateDetails(event.partial.details) ? event.partial.details.event.type : 'other',
    );
    expect(types).toEqual(['tool-execution-end']);
  });

  it('returns a structured result through submit_result when given an output schema', async () => {
    const child = createScriptedProvider([
      // Missing `confidence`: the child is told so and submits again.
      { toolCalls: [{ name: 'submit_result', arguments: { answer: 'five' } }] },
      {
        text: 'fixing it',
        toolCalls: [{ name: 'submit_result', arguments: { answer: '5', confidence: 0.9 } }],
      },
      { text: 'never reached' },
    ]);
    const solver = createSubAgentTool({
      name: 'solver',
      description: 'Solves.',
      provider: child,
      model: 'm',
      tools: [addTool],
      output: z.object({ answer: z.string(), confidence: z.number() }),
    });
    const parent = new Agent({
      provider: delegatingParent('solver', 'What is 2 + 3?'),
      model: 'm',
      tools: [solver],
    });
    const result = await parent.run('go').result;
    const subResult = resultFor(result, 'call_sub');
    expect(subResult?.isError).toBe(false);
    expect(text(subResult)).toBe('{"answer":"5","confidence":0.9}');
    expect(detailsOf(subResult)).toMatchObject({
      output: { answer: '5', confidence: 0.9 },
      stopReason: 'terminated',
      turns: 2,
    });
    // The first, invalid submission was answered with the validation error, and the child retried.
    expect(lastToolResult(child.requests[1] ?? { model: '', messages: [] })).toMatchObject({
      isError: true,
      errorKind: 'invalid-args',
    });
    expect(firstUserText(child.requests[0] ?? { model: '', messages: [] })).toBe(
      'What is 2 + 3?\n\nWhen you are done, call the submit_result tool with your result.',
    );
    expect(child.requests[0]?.tools?.map((tool) => tool.name)).toEqual(['add', 'submit_result']);
    expect(child.calls).toBe(2);
  });

  it('reports a child that ends without submitting its structured result as an error', async () => {
    const solver = createSubAgentTool({
      name: 'solver',
      description: 'Solves.',
      provider: createScriptedProvider([{ text: 'The answer is 5.' }]),
      model: 'm',
      output: z.object({ answer: z.string() }),
    });
    const parent = new Agent({
      provider: delegatingParent('solver', 'What is 2 + 3?'),
      model: 'm',
      tools: [solver],
    });
    const result = await parent.run('go').result;
    const subResult = resultFor(result, 'call_sub');
    expect(subResult?.isError).toBe(true);
    expect(text(subResult)).toBe(
      'Sub-agent "solver" did not finish: it ended without calling submit_result.\n' +
        'What it had said so far:\n\nThe answer is 5.',
    );
    expect(detailsOf(subResult).output).toBeUndefined();
  });

  it('rejects an output schema that is not an object or whose tool name is taken', () => {
    const base = { name: 's', description: 'd', provider: createScriptedProvider([]), model: 'm' };
    expect(() => createSubAgentTool({ ...base, output: z.string() })).toThrow(
      'input schema must describe an object',
    );
    const clash = defineTool({
      name: 'submit_result',
      description: 'Mine.',
      input: z.object({}),
      execute: async () => 'ok',
    });
    expect(() =>
      createSubAgentTool({ ...base, tools: [clash], output: z.object({ a: z.string() }) }),
    ).toThrow('a child tool is named "submit_result"');
  });
});
