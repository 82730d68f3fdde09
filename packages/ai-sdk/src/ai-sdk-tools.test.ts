// Every path of a call through toAiSdkTools — gate, hooks, timeout, locks, budget, abort — with the
// AI SDK's generateText/streamText (~630 lines: one mock model and its fixtures serve every describe).
import { readdir, readFile } from 'node:fs/promises';
import {
  type AgentEvent,
  defineTool,
  PermissionPolicy,
  type PermissionPolicyOptions,
  type PermissionRequest,
  ToolError,
} from '@agent/core';
import { generateText, isStepCount, type ModelMessage, streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { toAiSdkTool, toAiSdkTools } from './ai-sdk-tools.js';
import { scriptedModel } from './test-helpers.js';

function weatherTool() {
  const calls: unknown[] = [];
  const tool = defineTool({
    name: 'get_weather',
    description: 'Current weather for a city',
    input: z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']).optional() }),
    policy: { permission: 'read-only' },
    permissionSubjects: ({ city }) => [city],
    execute: async (args) => {
      calls.push(args);
      return `${args.city}: 18°C, sunny`;
    },
  });
  return { tool, calls };
}

/** The tool-result parts of the prompt the model got on its `index`-th call. */
function toolResultsSent(prompt: readonly { role: string; content: unknown }[]) {
  return prompt
    .filter((message) => message.role === 'tool')
    .flatMap((message) => message.content as { type: string; output?: unknown }[])
    .filter((part) => part.type === 'tool-result')
    .map((part) => part.output);
}

describe('toAiSdkTools in generateText', () => {
  it('runs a call through our tool and sends the model its text', async () => {
    const { tool, calls } = weatherTool();
    const model = scriptedModel([
      { toolCalls: [{ id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { text: 'It is sunny.' },
    ]);
    const result = await generateText({
      model,
      tools: toAiSdkTools([tool]),
      prompt: 'Weather in Paris?',
      stopWhen: isStepCount(3),
    });
    expect(calls).toEqual([{ city: 'Paris' }]);
    expect(result.text).toBe('It is sunny.');
    const [first] = result.steps;
    expect(first?.toolResults[0]?.output).toMatchObject({
      role: 'toolResult',
      toolCallId: 'call_1',
      toolName: 'get_weather',
      isError: false,
      content: [{ type: 'text', text: 'Paris: 18°C, sunny' }],
    });
    expect(toolResultsSent(model.doGenerateCalls[1]?.prompt ?? [])).toEqual([
      { type: 'text', value: 'Paris: 18°C, sunny' },
    ]);
  });

  it('the inputSchema is the tool JSON Schema, as the model gets it', async () => {
    const { tool } = weatherTool();
    const model = scriptedModel([{ text: 'ok' }]);
    await generateText({ model, tools: toAiSdkTools([tool]), prompt: 'hi' });
    const sent = model.doGenerateCalls[0]?.tools?.[0];
    expect(sent).toMatchObject({
      type: 'function',
      name: 'get_weather',
      description: 'Current weather for a city',
      inputSchema: tool.parameters,
    });
  });

  it.each([
    ['a wrong type', { city: 42 }, 'Invalid arguments: at "city"'],
    ['a missing field', {}, 'Invalid arguments: at "city"'],
    ['an unknown enum value', { city: 'Oslo', unit: 'kelvin' }, 'Invalid arguments: at "unit"'],
  ])(
    '%s is refused by our validation, as a tool-error the model reads',
    async (_label, input, message) => {
      const { tool, calls } = weatherTool();
      const model = scriptedModel([
        { toolCalls: [{ id: 'call_1', name: 'get_weather', input }] },
        { text: 'sorry' },
      ]);
      const result = await generateText({
        model,
        tools: toAiSdkTools([tool]),
        prompt: 'x',
        stopWhen: isStepCount(3),
      });
      expect(calls).toEqual([]);
      const error = result.steps[0]?.content.find((part) => part.type === 'tool-error');
      expect(ToolError.isInstance(error?.error)).toBe(true);
      expect((error?.error as ToolError | undefined)?.kind).toBe('invalid-args');
      const [sent] = toolResultsSent(model.doGenerateCalls[1]?.prompt ?? []) as {
        type: string;
        value: string;
      }[];
      expect(sent?.type).toBe('error-text');
      expect(sent?.value).toContain(message);
    },
  );

  it('prepareArguments runs before validation (the AI SDK does not validate first)', async () => {
    const calls: unknown[] = [];
    const tool = defineTool({
      name: 'read',
      description: 'Reads a file',
      input: z.object({ path: z.string() }),
      prepareArguments: (raw) => {
        const { file_path, ...rest } = raw as { file_path?: string };
        return file_path === undefined ? raw : { ...rest, path: file_path };
      },
      execute: async (args) => {
        calls.push(args);
        return 'contents';
      },
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 'c', name: 'read', input: { file_path: 'a.txt' } }] },
      { text: 'done' },
    ]);
    await generateText({
      model,
      tools: toAiSdkTools([tool]),
      prompt: 'x',
      stopWhen: isStepCount(3),
    });
    expect(calls).toEqual([{ path: 'a.txt' }]);
  });
});

describe('toAiSdkTools: the permission gate', () => {
  it.each([
    ['a deny rule', { deny: ['get_weather(Paris)'] }, 'Denied by rule "get_weather(Paris)"'],
    ['a disabled tool', { disabledTools: ['get_weather'] }, 'Tool "get_weather" is disabled'],
    ['an ask with nobody to ask', {}, 'needs approval; no approver configured'],
  ] as const)(
    '%s: the call comes back as a tool-error of kind denied',
    async (_label, rules, reason) => {
      const { tool, calls } = weatherTool();
      const model = scriptedModel([
        { toolCalls: [{ id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { text: 'denied' },
      ]);
      const policy = new PermissionPolicy(rules as PermissionPolicyOptions);
      const result = await generateText({
        model,
        // An ask goes to our (missing) approver here; a deny never asks anyone.
        tools: toAiSdkTools([tool], { permissions: policy, approvals: 'approver' }),
        prompt: 'x',
        stopWhen: isStepCount(3),
      });
      expect(calls).toEqual([]);
      const error = result.steps[0]?.content.find((part) => part.type === 'tool-error');
      expect(error?.error).toBeInstanceOf(Error);
      expect((error?.error as ToolError | undefined)?.kind).toBe('denied');
      expect((error?.error as ToolError | undefined)?.message).toContain(reason);
      const [sent] = toolResultsSent(model.doGenerateCalls[1]?.prompt ?? []);
      expect(sent).toEqual({
        type: 'error-text',
        value: expect.stringContaining('Permission denied'),
      });
    },
  );

  it('an ask becomes the AI SDK tool approval: the call waits, then runs once approved', async () => {
    const { tool, calls } = weatherTool();
    const model = scriptedModel([
      { toolCalls: [{ id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { text: 'It is sunny.' },
    ]);
    const tools = toAiSdkTools([tool], { permissions: new PermissionPolicy({}) });
    const messages: ModelMessage[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await generateText({ model, tools, messages, stopWhen: isStepCount(3) });
    expect(calls).toEqual([]);
    const request = first.content.find((part) => part.type === 'tool-approval-request');
    expect(request?.toolCall).toMatchObject({ toolCallId: 'call_1', input: { city: 'Paris' } });
    messages.push(...first.response.messages, {
      role: 'tool',
      content: [
        { type: 'tool-approval-response', approvalId: request?.approvalId ?? '', approved: true },
      ],
    });
    const second = await generateText({ model, tools, messages, stopWhen: isStepCount(3) });
    expect(calls).toEqual([{ city: 'Paris' }]);
    expect(second.text).toBe('It is sunny.');
  });

  it('an ask the user refuses in the AI SDK never runs: execution-denied', async () => {
    const { tool, calls } = weatherTool();
    const model = scriptedModel([
      { toolCalls: [{ id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { text: 'ok' },
    ]);
    const tools = toAiSdkTools([tool], { permissions: new PermissionPolicy({}) });
    const messages: ModelMessage[] = [{ role: 'user', content: 'Weather?' }];
    const first = await generateText({ model, tools, messages });
    const request = first.content.find((part) => part.type === 'tool-approval-request');
    messages.push(...first.response.messages, {
      role: 'tool',
      content: [
        {
          type: 'tool-approval-response',
          approvalId: request?.approvalId ?? '',
          approved: false,
          reason: 'not now',
        },
      ],
    });
    await generateText({ model, tools, messages, stopWhen: isStepCount(3) });
    expect(calls).toEqual([]);
    expect(toolResultsSent(model.doGenerateCalls[1]?.prompt ?? [])).toEqual([
      { type: 'execution-denied', reason: 'not now' },
    ]);
  });

  it('a generateText-level toolApproval cannot approve what our policy asks: our approver decides', async () => {
    const { tool, calls } = weatherTool();
    const asked: string[] = [];
    const model = scriptedModel([
      { toolCalls: [{ id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { text: 'ok' },
    ]);
    const policy = new PermissionPolicy({
      approver: (request) => {
        asked.push(request.toolCallId);
        return 'deny';
      },
    });
    const result = await generateText({
      model,
      tools: toAiSdkTools([tool], { permissions: policy }),
      toolApproval: () => 'approved',
      prompt: 'x',
      stopWhen: isStepCount(3),
    });
    expect(calls).toEqual([]);
    expect(asked).toEqual(['call_1']);
    const error = result.steps[0]?.content.find((part) => part.type === 'tool-error');
    expect((error?.error as ToolError | undefined)?.kind).toBe('denied');
  });

  it('what the rules allow runs without a question', async () => {
    const { tool, calls } = weatherTool();
    const model = scriptedModel([
      { toolCalls: [{ id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { text: 'ok' },
    ]);
    const policy = new PermissionPolicy({ mode: 'read-only' });
    const result = await generateText({
      model,
      tools: toAiSdkTools([tool], { permissions: policy }),
      prompt: 'x',
      stopWhen: isStepCount(3),
    });
    expect(result.content.some((part) => part.type === 'tool-approval-request')).toBe(false);
    expect(calls).toEqual([{ city: 'Paris' }]);
  });

  it('with approvals: approver, an ask reaches our approver with the call', async () => {
    const { tool, calls } = weatherTool();
    const asked: PermissionRequest[] = [];
    const policy = new PermissionPolicy({
      approver: (request) => {
        asked.push(request);
        return 'once';
      },
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 'call_9', name: 'get_weather', input: { city: 'Oslo' } }] },
      { text: 'ok' },
    ]);
    await generateText({
      model,
      tools: toAiSdkTools([tool], { permissions: policy, approvals: 'approver' }),
      prompt: 'x',
      stopWhen: isStepCount(3),
    });
    expect(
      asked.map(({ toolCallId, toolName, args, subjects }) => ({
        toolCallId,
        toolName,
        args,
        subjects,
      })),
    ).toEqual([
      { toolCallId: 'call_9', toolName: 'get_weather', args: { city: 'Oslo' }, subjects: ['Oslo'] },
    ]);
    expect(calls).toEqual([{ city: 'Oslo' }]);
  });
});

describe('toAiSdkTools: hooks, timeout, locks and the result budget', () => {
  it('hooks see the call and may replace its arguments; events carry the AI SDK call id', async () => {
    const { tool, calls } = weatherTool();
    const events: AgentEvent['type'][] = [];
    const model = scriptedModel([
      { toolCalls: [{ id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { text: 'ok' },
    ]);
    await generateText({
      model,
      tools: toAiSdkTools([tool], {
        hooks: {
          beforeToolExecution: (call) =>
            call.toolCallId === 'call_1'
              ? { action: 'replace', args: { city: 'Lyon' } }
              : undefined,
        },
        onEvent: (event) => events.push(event.type),
      }),
      prompt: 'x',
      stopWhen: isStepCount(3),
    });
    expect(calls).toEqual([{ city: 'Lyon' }]);
    expect(events).toEqual(['tool-execution-start', 'tool-execution-end']);
  });

  it('a tool past its timeout is cancelled: a tool-error of kind timeout', async () => {
    let sawAbort = false;
    const slow = defineTool({
      name: 'slow',
      description: 'Waits for its signal',
      input: z.object({}),
      policy: { timeoutMs: 30 },
      execute: (_args, ctx) =>
        new Promise<string>((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            sawAbort = true;
            resolve('stopped');
          });
        }),
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 'c', name: 'slow', input: {} }] },
      { text: 'ok' },
    ]);
    const result = await generateText({
      model,
      tools: toAiSdkTools([slow]),
      prompt: 'x',
      stopWhen: isStepCount(3),
    });
    const error = result.steps[0]?.content.find((part) => part.type === 'tool-error');
    expect((error?.error as ToolError | undefined)?.kind).toBe('timeout');
    expect((error?.error as ToolError | undefined)?.message).toBe('Tool exceeded timeout of 30 ms');
    expect(sawAbort).toBe(true);
  });

  it('calls on the same resource key never overlap, though the AI SDK runs them in parallel', async () => {
    let running = 0;
    let most = 0;
    const order: string[] = [];
    const edit = defineTool({
      name: 'edit',
      description: 'Edits a file',
      input: z.object({ path: z.string(), text: z.string() }),
      policy: { resourceKey: ({ path }) => path },
      execute: async ({ path, text }) => {
        running++;
        most = Math.max(most, running);
        order.push(`start ${path} ${text}`);
        await new Promise((resolve) => setImmediate(resolve));
        order.push(`end ${path} ${text}`);
        running--;
        return 'edited';
      },
    });
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'a', name: 'edit', input: { path: 'x.ts', text: '1' } },
          { id: 'b', name: 'edit', input: { path: 'x.ts', text: '2' } },
        ],
      },
      { text: 'ok' },
    ]);
    await generateText({
      model,
      tools: toAiSdkTools([edit]),
      prompt: 'x',
      stopWhen: isStepCount(3),
    });
    expect(most).toBe(1);
    expect(order).toEqual(['start x.ts 1', 'end x.ts 1', 'start x.ts 2', 'end x.ts 2']);
  });

  it('the model gets the text clipped to maxResultChars; the step keeps the whole result', async () => {
    const big = defineTool({
      name: 'big',
      description: 'A long output',
      input: z.object({}),
      policy: { maxResultChars: 100 },
      execute: async () => `${'a'.repeat(3000)}${'z'.repeat(1000)}`,
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 'c', name: 'big', input: {} }] },
      { text: 'ok' },
    ]);
    const result = await generateText({
      model,
      tools: toAiSdkTools([big]),
      prompt: 'x',
      stopWhen: isStepCount(3),
    });
    const [sent] = toolResultsSent(model.doGenerateCalls[1]?.prompt ?? []) as { value: string }[];
    expect(sent?.value).toBe(
      `${'a'.repeat(75)}\n[… 3900 of 4000 characters clipped …]\n${'z'.repeat(25)}`,
    );
    const output = result.steps[0]?.toolResults[0]?.output as { content: { text: string }[] };
    expect(output.content[0]?.text).toHaveLength(4000);
  });

  it('the runner default clips tools that set no limit', async () => {
    const big = defineTool({
      name: 'big',
      description: 'A long output',
      input: z.object({}),
      execute: async () => 'b'.repeat(500),
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 'c', name: 'big', input: {} }] },
      { text: 'ok' },
    ]);
    await generateText({
      model,
      tools: toAiSdkTools([big], { maxResultChars: 40 }),
      prompt: 'x',
      stopWhen: isStepCount(3),
    });
    const [sent] = toolResultsSent(model.doGenerateCalls[1]?.prompt ?? []) as { value: string }[];
    expect(sent?.value).toContain('[… 460 of 500 characters clipped …]');
  });

  it('images reach the model as files', async () => {
    const shot = defineTool({
      name: 'shot',
      description: 'A screenshot',
      input: z.object({}),
      execute: async () => ({
        content: [
          { type: 'text', text: 'the screen' },
          { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
        ],
      }),
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 'c', name: 'shot', input: {} }] },
      { text: 'ok' },
    ]);
    await generateText({
      model,
      tools: toAiSdkTools([shot]),
      prompt: 'x',
      stopWhen: isStepCount(3),
    });
    expect(toolResultsSent(model.doGenerateCalls[1]?.prompt ?? [])).toEqual([
      {
        type: 'content',
        value: [
          { type: 'text', text: 'the screen' },
          { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBORw0KGgo=' } },
        ],
      },
    ]);
  });

  it('JSON reaches the model as the AI SDK’s json output; beside text, as text', async () => {
    const stats = defineTool({
      name: 'stats',
      description: 'Counts',
      input: z.object({ shape: z.enum(['json', 'mixed', 'bigint']) }),
      execute: async ({ shape }) => ({
        content:
          shape === 'mixed'
            ? [
                { type: 'text', text: 'count:' },
                { type: 'json', value: [1, 2] },
              ]
            : [{ type: 'json', value: shape === 'json' ? { files: 3 } : { big: 10n } }],
      }),
    });
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'a', name: 'stats', input: { shape: 'json' } },
          { id: 'b', name: 'stats', input: { shape: 'mixed' } },
          { id: 'c', name: 'stats', input: { shape: 'bigint' } },
        ],
      },
      { text: 'ok' },
    ]);
    await generateText({
      model,
      tools: toAiSdkTools([stats]),
      prompt: 'x',
      stopWhen: isStepCount(3),
    });
    const sent = toolResultsSent(model.doGenerateCalls[1]?.prompt ?? []);
    expect(sent[0]).toEqual({ type: 'json', value: { files: 3 } });
    expect(sent[1]).toEqual({ type: 'text', value: 'count:\n[\n  1,\n  2\n]' });
    // A BigInt cannot be JSON: the value goes as its description instead of failing the request.
    expect(sent[2]).toMatchObject({ type: 'json' });
    expect(String((sent[2] as { value: unknown }).value)).toMatch(/cannot be written/);
  });

  it.each([
    ['a dot', ['get.weather']],
    ['a space', ['get weather']],
    ['a slash', ['tools/get_weather']],
    ['letters outside ASCII', ['météo']],
    ['65 characters', ['w'.repeat(65)]],
    ['an empty name', ['']],
    ['one of two that a framework would make alike', ['get_weather', 'get.weather']],
  ])(
    'a hand-made tool whose name the providers refuse (%s) is refused up front',
    (_label, names) => {
      const { tool } = weatherTool();
      const tools = names.map((name) => ({ ...tool, name }));
      const bad = names.find((name) => !/^[a-zA-Z0-9_-]{1,64}$/.test(name)) ?? '';
      expect(() => toAiSdkTools(tools)).toThrow(`invalid tool name ${JSON.stringify(bad)}`);
      expect(() => toAiSdkTool({ ...tool, name: bad })).toThrow('invalid tool name');
      // 64 characters of the allowed ones pass.
      expect(() => toAiSdkTools([{ ...tool, name: 'w'.repeat(64) }])).not.toThrow();
    },
  );

  it('two tools of one name are refused up front', () => {
    const { tool } = weatherTool();
    expect(() => toAiSdkTools([tool, tool])).toThrow('two tools are named "get_weather"');
  });

  it('tools named like Object.prototype members are entries of the set, each once', () => {
    const named = (name: string) =>
      defineTool({
        name,
        description: `The ${name} tool`,
        input: z.object({}),
        execute: async () => name,
      });
    const names = ['__proto__', 'constructor', 'toString', 'get_weather'];
    const set = toAiSdkTools(names.map(named));
    expect(Object.getPrototypeOf(set)).toBe(Object.prototype);
    expect(Object.keys(set)).toEqual(names);
    expect(Object.getOwnPropertyDescriptor(set, '__proto__')?.value?.description).toBe(
      'The __proto__ tool',
    );
    expect(() => toAiSdkTools([named('__proto__'), named('__proto__')])).toThrow(
      'two tools are named "__proto__"',
    );
  });
});

describe('toAiSdkTools in streamText', () => {
  it('streams the call, runs it through our tool and continues', async () => {
    const { tool, calls } = weatherTool();
    const model = scriptedModel([
      {
        text: 'Let me look. ',
        toolCalls: [
          { id: 'call_1', name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } },
        ],
      },
      { text: 'It is sunny.' },
    ]);
    const result = streamText({
      model,
      tools: toAiSdkTools([tool]),
      prompt: 'Weather?',
      stopWhen: isStepCount(3),
    });
    const parts: string[] = [];
    for await (const part of result.fullStream) {
      if (part.type === 'tool-result' || part.type === 'tool-call' || part.type === 'tool-error')
        parts.push(`${part.type}:${part.toolCallId}`);
    }
    expect(parts).toEqual(['tool-call:call_1', 'tool-result:call_1']);
    const steps = await result.steps;
    expect(steps.map((step) => step.text)).toEqual(['Let me look. ', 'It is sunny.']);
    expect(calls).toEqual([{ city: 'Paris', unit: 'celsius' }]);
  });
});

describe('toAiSdkTools: abort', () => {
  it('aborting streamText stops a running bash (its process is gone)', async () => {
    const { createBashTool } = await import('@agent/tools-builtin');
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const cwd = await mkdtemp(join(tmpdir(), 'ai-sdk-bash-'));
    const marker = `${process.pid}${Date.now() % 100000}`;
    const bash = createBashTool({ cwd, killGraceMs: 200 });
    const controller = new AbortController();
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    let ended: (event: AgentEvent) => void = () => {};
    const end = new Promise<AgentEvent>((resolve) => {
      ended = resolve;
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 'c', name: 'bash', input: { command: `echo go; sleep 3${marker}` } }] },
      { text: 'done' },
    ]);
    try {
      const result = streamText({
        model,
        tools: toAiSdkTools([bash], {
          onEvent: (event) => {
            if (event.type === 'tool-execution-update') started();
            if (event.type === 'tool-execution-end') ended(event);
          },
        }),
        prompt: 'x',
        abortSignal: controller.signal,
        stopWhen: isStepCount(3),
      });
      const consumed = (async () => {
        for await (const _part of result.fullStream) {
          // Drained until the abort ends it.
        }
      })();
      await running;
      // `go` is printed before bash starts the sleep: wait until the process is there.
      await expect.poll(() => sleepers(marker), { timeout: 20_000 }).toBe(1);
      controller.abort();
      // The call ends when the tool has stopped (a tool that outlived its grace period would
      // have been reported as orphaned instead): its process group is gone by then.
      expect(await end).toMatchObject({
        type: 'tool-execution-end',
        isError: true,
        result: { content: [{ type: 'text', text: 'Cancelled' }] },
      });
      await consumed.catch(() => undefined);
      expect(await sleepers(marker)).toBe(0);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});

/** Processes whose command line is `sleep 3<marker>` (the bash call's own child). */
async function sleepers(marker: string): Promise<number> {
  let count = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = await readFile(`/proc/${entry}/cmdline`, 'utf8');
      if (commandLine === `sleep\u00003${marker}\u0000`) count++;
    } catch {
      // The process ended while we looked.
    }
  }
  return count;
}
