import {
  Agent,
  type AgentEvent,
  type AgentRunResult,
  defineTool,
  messageText,
  type PermissionRequest,
  ToolRegistry,
  type ToolResultMessage,
  toolResultText,
} from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  createSubAgentTool,
  isSubAgentDetails,
  isSubAgentTool,
  isSubAgentUpdateDetails,
  type SubAgentDetails,
  type SubAgentEventInfo,
  SubAgentTool,
} from './index.js';
import {
  activeTimers,
  addTool,
  blockTool,
  deferred,
  eventsOfType,
  everyCallAnswered,
  firstUserText,
  lastToolResult,
  meetTool,
  noteTool,
  toolResults,
} from './test-helpers.js';

function text(message: ToolResultMessage | undefined): string {
  return message === undefined ? '' : messageText(message);
}

function detailsOf(message: ToolResultMessage | undefined): SubAgentDetails {
  const details = message?.details;
  if (!isSubAgentDetails(details)) throw new Error('expected sub-agent details');
  return details;
}

function resultFor(result: AgentRunResult, toolCallId: string): ToolResultMessage | undefined {
  return toolResults(result.messages).find((message) => message.toolCallId === toolCallId);
}

/** A child script: call `add` once, then report the sum. */
function addingChild() {
  return createScriptedProvider([
    {
      text: 'Adding.',
      toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }],
      usage: { input: 10, output: 4 },
    },
    (request) => ({
      text: `The sum is ${text(lastToolResult(request))}.`,
      usage: { input: 20, output: 6, cacheRead: 5 },
    }),
  ]);
}

/** A parent script: one call of `tool` with `task`, then echo the tool result. */
function delegatingParent(tool: string, task: string) {
  return createScriptedProvider([
    {
      toolCalls: [{ id: 'call_sub', name: tool, arguments: { task } }],
      usage: { input: 100, output: 10 },
    },
    (request) => ({ text: `Parent: ${text(lastToolResult(request))}` }),
  ]);
}

describe('createSubAgentTool', () => {
  it('runs a child loop with real tools; its final text is the parent tool result', async () => {
    const child = addingChild();
    const childEvents: { event: AgentEvent; info: SubAgentEventInfo }[] = [];
    const researcher = createSubAgentTool({
      name: 'researcher',
      description: 'Answers arithmetic questions.',
      provider: child,
      model: 'child-model',
      systemPrompt: 'You are the child.',
      tools: [addTool],
      onChildEvent: (event, info) => childEvents.push({ event, info }),
    });
    const parentProvider = delegatingParent('researcher', 'What is 2 + 3?');
    const parent = new Agent({
      provider: parentProvider,
      model: 'parent-model',
      tools: [researcher],
    });

    const result = await parent.run('Ask the researcher').result;

    expect(result.stopReason).toBe('completed');
    const subResult = resultFor(result, 'call_sub');
    expect(subResult?.content).toEqual([{ type: 'text', text: 'The sum is 5.' }]);
    expect(subResult?.isError).toBe(false);
    const start = childEvents.find(({ event }) => event.type === 'agent-start');
    expect(start?.event).toEqual({ type: 'agent-start', runId: subResult?.childLoopId });
    expect(childEvents.every(({ info }) => info.childLoopId === subResult?.childLoopId)).toBe(true);
    expect(childEvents.every(({ info }) => info.toolCallId === 'call_sub')).toBe(true);
    const details = detailsOf(subResult);
    expect(details).toMatchObject({
      childLoopId: subResult?.childLoopId,
      agentName: 'researcher',
      depth: 1,
      stopReason: 'completed',
      turns: 2,
      toolCalls: 1,
    });
    // The child ran the real add tool and the model saw its output.
    expect(text(lastToolResult(child.requests[1] ?? { model: '', messages: [] }))).toBe('5');
    expect(child.requests[0]?.model).toBe('child-model');
    expect(child.requests[0]?.systemPrompt).toBe('You are the child.');
    expect(messageText(result.finalMessage ?? { role: 'user', content: '', timestamp: 0 })).toBe(
      'Parent: The sum is 5.',
    );
  });

  it('sums usage over the child turns and keeps it out of the parent run usage', async () => {
    const researcher = createSubAgentTool({
      name: 'researcher',
      description: 'Adds.',
      provider: addingChild(),
      model: 'm',
      tools: [addTool],
    });
    const parent = new Agent({
      provider: delegatingParent('researcher', 'add'),
      model: 'm',
      tools: [researcher],
    });
    const result = await parent.run('go').result;
    const details = detailsOf(resultFor(result, 'call_sub'));
    expect(details.usage).toEqual({
      input: 30,
      output: 10,
      cacheRead: 5,
      cacheWrite: 0,
      totalTokens: 45,
    });
    expect(details.totalUsage).toEqual(details.usage);
    expect(result.usage.input).toBe(100);
  });

  it('gives every call a fresh conversation that holds none of the parent history', async () => {
    const child = createScriptedProvider(
      [
        (request) => ({
          text: `child saw ${request.messages.length} message(s): ${firstUserText(request)}`,
        }),
      ],
      { whenExhausted: 'repeat-last' },
    );
    const helper = createSubAgentTool({
      name: 'helper',
      description: 'Helps.',
      provider: child,
      model: 'm',
      tools: [addTool],
    });
    const parentProvider = createScriptedProvider([
      { toolCalls: [{ id: 'first', name: 'helper', arguments: { task: 'task one' } }] },
      { text: 'done one' },
      { toolCalls: [{ id: 'second', name: 'helper', arguments: { task: 'task two' } }] },
      { text: 'done two' },
    ]);
    const parent = new Agent({
      provider: parentProvider,
      model: 'm',
      systemPrompt: 'PARENT PROMPT',
      tools: [helper, noteTool([])],
    });
    const first = await parent.run('the parent secret').result;
    const second = await parent.run('another parent secret').result;

    expect(child.requests).toHaveLength(2);
    for (const [index, request] of child.requests.entries()) {
      expect(request.messages).toHaveLength(1);
      expect(firstUserText(request)).toBe(index === 0 ? 'task one' : 'task two');
      expect(request.systemPrompt).toBeUndefined();
      expect(request.tools?.map((tool) => tool.name)).toEqual(['add']);
    }
    expect(JSON.stringify(child.requests)).not.toMatch(/secret|PARENT PROMPT/);
    const one = resultFor(first, 'first');
    const two = resultFor(second, 'second');
    expect(text(two)).toBe('child saw 1 message(s): task two');
    expect(one?.childLoopId).toBeDefined();
    expect(two?.childLoopId).toBeDefined();
    expect(one?.childLoopId).not.toBe(two?.childLoopId);
  });

  it('runs the calls of one parallel batch concurrently and answers each call with its own child', async () => {
    const child = createScriptedProvider(
      [
        (request) => {
          const task = firstUserText(request);
          const last = lastToolResult(request);
          return last === undefined
            ? { toolCalls: [{ name: 'meet', arguments: { who: task } }] }
            : { text: `${task} done after ${text(last)}` };
        },
      ],
      { whenExhausted: 'repeat-last' },
    );
    const order: string[] = [];
    const worker = createSubAgentTool({
      name: 'worker',
      description: 'Works.',
      provider: child,
      model: 'm',
      // The meet tool only returns once both children are inside it: sequential runs would hang.
      tools: [meetTool(2)],
      onChildEvent: (event, info) => {
        if (event.type === 'agent-start' || event.type === 'agent-end')
          order.push(`${event.type}:${info.toolCallId}`);
      },
    });
    const parent = new Agent({
      provider: createScriptedProvider([
        {
          toolCalls: [
            { id: 'call_alpha', name: 'worker', arguments: { task: 'alpha' } },
            { id: 'call_beta', name: 'worker', arguments: { task: 'beta' } },
          ],
        },
        { text: 'both done' },
      ]),
      model: 'm',
      tools: [worker],
    });
    const result = await parent.run('go').result;

    expect(result.stopReason).toBe('completed');
    expect(text(resultFor(result, 'call_alpha'))).toBe('alpha done after met: alpha');
    expect(text(resultFor(result, 'call_beta'))).toBe('beta done after met: beta');
    expect(resultFor(result, 'call_alpha')?.childLoopId).not.toBe(
      resultFor(result, 'call_beta')?.childLoopId,
    );
    expect(order.slice(0, 2).sort()).toEqual(['agent-start:call_alpha', 'agent-start:call_beta']);
  }, 10_000);

  it('runs calls one at a time when exclusive', async () => {
    const order: string[] = [];
    const worker = createSubAgentTool({
      name: 'worker',
      description: 'Works alone.',
      provider: createScriptedProvider([(request) => ({ text: firstUserText(request) })], {
        whenExhausted: 'repeat-last',
      }),
      model: 'm',
      exclusive: true,
      onChildEvent: (event, info) => {
        if (event.type === 'agent-start' || event.type === 'agent-end')
          order.push(`${event.type}:${info.toolCallId}`);
      },
    });
    expect(worker.policy?.exclusive).toBe(true);
    const parent = new Agent({
      provider: createScriptedProvider([
        {
          toolCalls: [
            { id: 'a', name: 'worker', arguments: { task: 'A' } },
            { id: 'b', name: 'worker', arguments: { task: 'B' } },
          ],
        },
        { text: 'ok' },
      ]),
      model: 'm',
      tools: [worker],
    });
    const result = await parent.run('go').result;
    expect(order).toEqual(['agent-start:a', 'agent-end:a', 'agent-start:b', 'agent-end:b']);
    expect(text(resultFor(result, 'b'))).toBe('B');
  });

  it('ends the child when the parent is aborted mid-child; every call is answered, no timers left', async () => {
    const started = deferred();
    const childEnd = deferred<Extract<AgentEvent, { type: 'agent-end' }>>();
    const child = createScriptedProvider([
      { text: 'Starting the long job.', toolCalls: [{ name: 'block', arguments: {} }] },
      { text: 'never reached' },
    ]);
    const worker = createSubAgentTool({
      name: 'worker',
      description: 'Runs long jobs.',
      provider: child,
      model: 'm',
      tools: [blockTool(() => started.resolve())],
      onChildEvent: (event) => {
        if (event.type === 'agent-end') childEnd.resolve(event);
      },
    });
    const parentProvider = createScriptedProvider([
      {
        toolCalls: [
          { id: 'call_worker', name: 'worker', arguments: { task: 'long' } },
          { id: 'call_add', name: 'add', arguments: { a: 1, b: 1 } },
        ],
      },
      { text: 'never reached' },
    ]);
    const parent = new Agent({ provider: parentProvider, model: 'm', tools: [worker, addTool] });
    const timersBefore = activeTimers();

    const run = parent.run('go');
    await started.promise;
    run.abort();
    const result = await run.result;
    const ended = await childEnd.promise;

    expect(result.stopReason).toBe('aborted');
    expect(everyCallAnswered(parent.messages)).toBe(true);
    expect(resultFor(result, 'call_worker')).toMatchObject({
      isError: true,
      errorKind: 'cancelled',
    });
    expect(text(resultFor(result, 'call_add'))).toBe('2');
    expect(ended.stopReason).toBe('aborted');
    expect(everyCallAnswered(ended.messages)).toBe(true);
    expect(toolResults(ended.messages)[0]).toMatchObject({
      toolName: 'block',
      errorKind: 'cancelled',
    });
    expect(child.calls).toBe(1);
    expect(parentProvider.calls).toBe(1);
    expect(activeTimers()).toBe(timersBefore);
  });

  it('a per-call timeout aborts that child alone and the parent carries on', async () => {
    const childEnd = deferred<Extract<AgentEvent, { type: 'agent-end' }>>();
    const worker = createSubAgentTool({
      name: 'worker',
      description: 'Runs long jobs.',
      provider: createScriptedProvider([{ toolCalls: [{ name: 'block', arguments: {} }] }]),
      model: 'm',
      tools: [blockTool(() => undefined)],
      policy: { timeoutMs: 20 },
      onChildEvent: (event) => {
        if (event.type === 'agent-end') childEnd.resolve(event);
      },
    });
    const parent = new Agent({
      provider: delegatingParent('worker', 'long'),
      model: 'm',
      tools: [worker],
    });
    const result = await parent.run('go').result;
    expect(result.stopReason).toBe('completed');
    expect(resultFor(result, 'call_sub')).toMatchObject({ isError: true, errorKind: 'timeout' });
    expect((await childEnd.promise).stopReason).toBe('aborted');
  });

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

  it('refuses a nested sub-agent beyond maxDepth with a clear error', async () => {
    const registry = new ToolRegistry();
    const starts: number[] = [];
    const refusals: { depth: number; text: string }[] = [];
    const provider = createScriptedProvider(
      [
        (request) => {
          const last = lastToolResult(request);
          return last === undefined
            ? {
                toolCalls: [{ name: 'delegate', arguments: { task: 'go deeper' } }],
                usage: { input: 1, output: 1 },
              }
            : { text: `saw: ${text(last)}`, usage: { input: 1, output: 1 } };
        },
      ],
      { whenExhausted: 'repeat-last' },
    );
    const delegate = createSubAgentTool({
      name: 'delegate',
      description: 'Delegates, recursively.',
      provider,
      model: 'm',
      tools: registry,
      maxDepth: 2,
      onChildEvent: (event, info) => {
        if (event.type === 'agent-start') starts.push(info.depth);
        if (event.type === 'tool-execution-end' && event.isError)
          refusals.push({
            depth: info.depth,
            text: toolResultText(event.result.content),
          });
      },
    });
    // The sub-agent may call itself: the live registry is read at each run.
    registry.register(delegate);
    const parent = new Agent({ provider, model: 'm', tools: [delegate] });
    const result = await parent.run('go').result;

    expect(result.stopReason).toBe('completed');
    expect(starts).toEqual([1, 2]);
    const refusal =
      'Sub-agent "delegate" was not started: it would run at nesting depth 3, over the limit of 2 ' +
      '(maxDepth). Do this part yourself with your other tools.';
    expect(refusals).toEqual([{ depth: 2, text: refusal }]);
    expect(messageText(result.finalMessage ?? { role: 'user', content: '', timestamp: 0 })).toBe(
      `saw: saw: saw: ${refusal}`,
    );
    // totalUsage adds the nested child's usage to the child's own.
    const details = detailsOf(resultFor(result, toolResults(result.messages)[0]?.toolCallId ?? ''));
    expect(details.usage.totalTokens).toBe(4);
    expect(details.totalUsage.totalTokens).toBe(8);
    expect(delegate.callerDepth).toBe(0);
    expect(delegate.depthLimit).toBe(2);
  });

  it('the smallest maxDepth along the chain wins', async () => {
    const inner = createSubAgentTool({
      name: 'inner',
      description: 'Inner.',
      provider: createScriptedProvider([{ text: 'inner ran' }]),
      model: 'm',
      maxDepth: 5,
    });
    const outer = createSubAgentTool({
      name: 'outer',
      description: 'Outer.',
      provider: createScriptedProvider([
        { toolCalls: [{ name: 'inner', arguments: { task: 'x' } }] },
        (request) => ({ text: text(lastToolResult(request)) }),
      ]),
      model: 'm',
      tools: [inner],
      maxDepth: 1,
    });
    const parent = new Agent({
      provider: delegatingParent('outer', 'y'),
      model: 'm',
      tools: [outer],
    });
    const result = await parent.run('go').result;
    expect(text(resultFor(result, 'call_sub'))).toContain(
      'Sub-agent "inner" was not started: it would run at nesting depth 2, over the limit of 1',
    );
  });

  it('derives its permission tier from the child tools and passes the permission gate to the child', async () => {
    const notes: string[] = [];
    const base = { description: 'd', provider: createScriptedProvider([]), model: 'm' };
    expect(createSubAgentTool({ ...base, name: 'none' }).policy?.permission).toBe('read-only');
    expect(createSubAgentTool({ ...base, name: 'r', tools: [addTool] }).policy?.permission).toBe(
      'read-only',
    );
    const writer = createSubAgentTool({ ...base, name: 'w', tools: [addTool, noteTool(notes)] });
    expect(writer.policy?.permission).toBe('workspace-write');
    expect(writer.policy?.exclusive).toBe(false);
    const untyped = defineTool({
      name: 'untyped',
      description: 'No policy.',
      input: z.object({}),
      execute: async () => 'ok',
    });
    expect(createSubAgentTool({ ...base, name: 'f', tools: [untyped] }).policy?.permission).toBe(
      'full-access',
    );
    expect(
      createSubAgentTool({
        ...base,
        name: 'o',
        tools: [untyped],
        policy: { permission: 'read-only' },
      }).policy?.permission,
    ).toBe('read-only');
    const registry = new ToolRegistry([addTool]);
    const self = createSubAgentTool({ ...base, name: 'self', tools: registry });
    registry.register(self);
    expect(self.policy?.permission).toBe('read-only');
    registry.register(noteTool(notes));
    expect(self.policy?.permission).toBe('workspace-write');
    expect(isSubAgentTool(self)).toBe(true);
    expect(isSubAgentTool(addTool)).toBe(false);
    expect(SubAgentTool.isInstance(self)).toBe(true);

    const gated: PermissionRequest[] = [];
    const worker = createSubAgentTool({
      name: 'worker',
      description: 'Writes notes.',
      provider: createScriptedProvider([
        { toolCalls: [{ name: 'note', arguments: { text: 'hello' } }] },
        (request) => ({ text: text(lastToolResult(request)) }),
      ]),
      model: 'm',
      tools: [noteTool(notes)],
      permissionGate: (request) => {
        gated.push(request);
        return { behavior: 'deny', reason: 'notes are read-only today' };
      },
    });
    const parentGate: string[] = [];
    const parent = new Agent({
      provider: delegatingParent('worker', 'write'),
      model: 'm',
      tools: [worker],
      permissionGate: (request) => {
        parentGate.push(`${request.toolName}:${request.tier}`);
        return { behavior: 'allow' };
      },
    });
    const result = await parent.run('go').result;
    expect(parentGate).toEqual(['worker:workspace-write']);
    expect(gated.map((request) => request.toolName)).toEqual(['note']);
    expect(text(resultFor(result, 'call_sub'))).toBe(
      'Permission denied: notes are read-only today',
    );
    expect(notes).toEqual([]);
  });

  it('takes a custom input schema, prompt and result format', async () => {
    const child = createScriptedProvider(
      [(request) => ({ text: JSON.stringify({ answer: firstUserText(request) }) })],
      { whenExhausted: 'repeat-last' },
    );
    const reviewer = createSubAgentTool({
      name: 'reviewer',
      description: 'Reviews one file.',
      provider: child,
      model: 'm',
      input: z.object({
        file: z.string().describe('Path of the file'),
        question: z.string(),
      }),
      prompt: ({ file, question }) => `In ${file}: ${question}`,
      includeMessages: true,
      formatResult: ({ finalText, details, args }) => {
        const parsed = z.object({ answer: z.string() }).parse(JSON.parse(finalText));
        return `${args.file} -> ${parsed.answer} (turns: ${details.turns})`;
      },
    });
    expect(reviewer.parameters.properties).toMatchObject({
      file: { type: 'string', description: 'Path of the file' },
      question: { type: 'string' },
    });
    const parent = new Agent({
      provider: createScriptedProvider([
        {
          toolCalls: [
            { id: 'good', name: 'reviewer', arguments: { file: 'a.ts', question: 'why?' } },
            { id: 'bad', name: 'reviewer', arguments: { file: 3 } },
          ],
        },
        { text: 'ok' },
      ]),
      model: 'm',
      tools: [reviewer],
    });
    const result = await parent.run('go').result;
    const good = resultFor(result, 'good');
    expect(text(good)).toBe('a.ts -> In a.ts: why? (turns: 1)');
    expect(detailsOf(good).messages?.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(resultFor(result, 'bad')).toMatchObject({ isError: true, errorKind: 'invalid-args' });
    expect(text(resultFor(result, 'bad'))).toContain('"file"');
    expect(child.calls).toBe(1);
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

  it('describes the default task argument for the model', () => {
    const tool = createSubAgentTool({
      name: 'helper',
      description: 'Helps.',
      provider: createScriptedProvider([]),
      model: 'm',
    });
    expect(tool.parameters.required).toEqual(['task']);
    expect(JSON.stringify(tool.parameters)).toContain('It cannot see this conversation');
    expect(() =>
      createSubAgentTool({
        ...{ name: 'x', description: 'd', model: 'm' },
        provider: createScriptedProvider([]),
        maxDepth: 0,
      }),
    ).toThrow('maxDepth must be an integer >= 1');
    expect(() =>
      createSubAgentTool({
        name: 'x',
        description: 'd',
        model: 'm',
        provider: createScriptedProvider([]),
        maxTurns: -1,
      }),
    ).toThrow('maxTurns must be a number >= 0');
  });

  it('a conversation holding sub-agent results serialises to JSON and resumes', async () => {
    const researcher = createSubAgentTool({
      name: 'researcher',
      description: 'Adds.',
      provider: addingChild(),
      model: 'm',
      tools: [addTool],
    });
    const parent = new Agent({
      provider: delegatingParent('researcher', 'add'),
      model: 'm',
      tools: [researcher],
    });
    await parent.run('go').result;
    const saved = JSON.parse(JSON.stringify(parent.toJSON())) as ReturnType<Agent['toJSON']>;
    expect(saved).toEqual(parent.toJSON());

    const resumedProvider = createScriptedProvider([
      (request) => ({ text: `resumed with ${request.messages.length} messages` }),
    ]);
    const resumed = new Agent({
      provider: resumedProvider,
      model: 'm',
      tools: [researcher],
      messages: saved.messages,
    });
    const result = await resumed.run('And now?').result;
    expect(result.stopReason).toBe('completed');
    const request = resumedProvider.requests[0];
    const previous = request?.messages.find((message) => message.role === 'toolResult');
    expect(previous).toMatchObject({
      role: 'toolResult',
      toolCallId: 'call_sub',
      content: [{ type: 'text', text: 'The sum is 5.' }],
      childLoopId: toolResults(parent.messages)[0]?.childLoopId,
    });
    expect(request?.messages).toHaveLength(5);
  });
});
