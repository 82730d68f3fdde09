import { Agent, type AgentEvent, messageText } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createSubAgentTool, type SubAgentEventInfo } from './index.js';
import {
  activeTimers,
  addingChild,
  addTool,
  blockTool,
  deferred,
  delegatingParent,
  detailsOf,
  everyCallAnswered,
  firstUserText,
  lastToolResult,
  meetTool,
  noteTool,
  resultFor,
  text,
  toolResults,
} from './test-helpers.js';

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
