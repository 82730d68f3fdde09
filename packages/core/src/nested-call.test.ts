import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import type { AgentEvent } from './agent-events.js';
import type { PermissionRequest, ToolCallInfo } from './agent-options.js';
import { defineTool } from './define-tool.js';
import { executeTool } from './execute-tool.js';
import type { ToolResultMessage } from './messages.js';
import { createPermissionGate } from './permissions.js';
import { ResourceLocks } from './resource-locks.js';
import { createScriptedProvider } from './testing/scripted-provider.js';
import { deferred, resultText, runToEnd, toolResults } from './testing/test-helpers.js';
import type { AnyAgentTool } from './tool.js';

// `ctx.callTool`: a tool's nested calls go through the loop's own path (nested-call.ts).

const echo = defineTool({
  name: 'echo',
  description: 'echoes its text',
  input: z.object({ text: z.string() }),
  policy: { permission: 'read-only' },
  permissionSubjects: ({ text }) => [text],
  execute: async ({ text }) => `echo: ${text}`,
});

/** A tool that makes the nested calls listed in its arguments, one after another, and reports each result. */
function caller(targets: readonly AnyAgentTool[]): AnyAgentTool {
  return defineTool({
    name: 'caller',
    description: 'calls other tools',
    input: z.object({ calls: z.array(z.object({ tool: z.string(), args: z.unknown() })) }),
    execute: async ({ calls }, ctx) => {
      if (ctx.callTool === undefined) throw new Error('no callTool');
      const lines: string[] = [];
      for (const { tool: name, args } of calls) {
        const tool = targets.find((candidate) => candidate.name === name);
        if (tool === undefined) throw new Error(`unknown ${name}`);
        const result = await ctx.callTool(tool, args);
        lines.push(
          `${result.isError ? `error(${result.errorKind})` : 'ok'}: ${resultText(result)}`,
        );
      }
      return lines.join('\n');
    },
  });
}

function agentCalling(
  calls: { tool: string; args: unknown }[],
  tools: AnyAgentTool[],
  options: Partial<ConstructorParameters<typeof Agent>[0]> = {},
): Agent {
  return new Agent({
    provider: createScriptedProvider([
      { toolCalls: [{ id: 'parent', name: 'caller', arguments: { calls } }] },
      { text: 'done' },
    ]),
    model: 'test',
    tools: [caller(tools), ...tools],
    ...options,
  });
}

describe('ctx.callTool', () => {
  it('runs the nested call and resolves with its result message', async () => {
    const { result } = await runToEnd(
      agentCalling([{ tool: 'echo', args: { text: 'hi' } }], [echo]),
    );
    expect(resultText(toolResults(result.messages)[0])).toBe('ok: echo: hi');
  });

  it('validates the arguments like a direct call', async () => {
    const { result } = await runToEnd(agentCalling([{ tool: 'echo', args: { text: 5 } }], [echo]));
    const text = resultText(toolResults(result.messages)[0]);
    expect(text).toMatch(/^error\(invalid-args\): Invalid arguments: at "text": expected string/);
    expect(text).toContain('"text"');
  });

  it.each([
    ['a deny rule', { mode: 'full-access' as const, deny: ['echo(secret*)'] }, 'error(denied)'],
    ['no approver', { mode: 'default' as const, allow: ['caller'] }, 'error(denied)'],
    ['an allow rule', { allow: ['caller', 'echo(secret*)'] }, 'ok'],
    ['the mode', { mode: 'read-only' as const, allow: ['caller'] }, 'ok'],
  ])('asks the permission gate as a direct call would (%s)', async (_name, rules, expected) => {
    const nested = await runToEnd(
      agentCalling([{ tool: 'echo', args: { text: 'secret-1' } }], [echo], {
        permissionGate: createPermissionGate({ ...rules }),
      }),
    );
    const direct = await executeTool(
      echo,
      { text: 'secret-1' },
      {
        permissionGate: createPermissionGate({ ...rules }),
      },
    );
    const text = resultText(toolResults(nested.result.messages)[0]);
    expect(text.startsWith(`${expected}:`)).toBe(true);
    expect(direct.isError).toBe(expected !== 'ok');
    if (direct.isError) expect(text).toBe(`error(denied): ${resultText(direct)}`);
  });

  it('tells the gate and the hooks which call made it; an approval question pauses the caller', async () => {
    const asked = deferred<PermissionRequest>();
    const answer = deferred<'once' | 'deny'>();
    const seen: string[] = [];
    const agent = agentCalling(
      [
        { tool: 'echo', args: { text: 'a' } },
        { tool: 'echo', args: { text: 'b' } },
      ],
      [echo],
      {
        permissionGate: createPermissionGate({
          allow: ['caller'],
          approver: async (request) => {
            asked.resolve(request);
            return request.subjects[0] === 'a' ? await answer.promise : 'deny';
          },
        }),
        hooks: {
          beforeToolExecution: (call: ToolCallInfo) => {
            seen.push(`before ${call.toolName} ${call.parentToolCallId ?? '-'}`);
            return undefined;
          },
          afterToolExecution: (call: ToolCallInfo, result) => {
            seen.push(`after ${call.toolName} ${call.parentToolCallId ?? '-'}`);
            return result;
          },
        },
      },
    );
    const run = agent.run('go');
    const request = await asked.promise;
    expect(request.toolCallId).toBe('parent/1');
    expect(request.parentToolCallId).toBe('parent');
    // Which tool made it, so a question can say a script asked, not the model.
    expect(request.parentToolName).toBe('caller');
    expect(seen).toEqual(['before caller -']);
    answer.resolve('once');
    const result = await run.result;
    expect(resultText(toolResults(result.messages)[0])).toBe(
      'ok: echo: a\nerror(denied): Permission denied: Denied by the user',
    );
    expect(seen).toEqual([
      'before caller -',
      'before echo parent',
      'after echo parent',
      'after caller -',
    ]);
  });

  it('tags the nested events with the parent call and adds no result message', async () => {
    const events: AgentEvent[] = [];
    const { result } = await runToEnd(
      agentCalling([{ tool: 'echo', args: { text: 'x' } }], [echo], {
        onEvent: (event) => events.push(event),
      }),
    );
    const tools = events.filter(
      (event) => event.type === 'tool-execution-start' || event.type === 'tool-execution-end',
    );
    expect(
      tools.map((event) => [
        event.type,
        event.toolCallId,
        'parentToolCallId' in event ? event.parentToolCallId : undefined,
      ]),
    ).toEqual([
      ['tool-execution-start', 'parent', undefined],
      ['tool-execution-start', 'parent/1', 'parent'],
      ['tool-execution-end', 'parent/1', 'parent'],
      ['tool-execution-end', 'parent', undefined],
    ]);
    expect(toolResults(result.messages).map((message) => message.toolCallId)).toEqual(['parent']);
  });

  it('aborting the run aborts the running nested call, which gets a Cancelled result', async () => {
    const started = deferred();
    const nestedResult = deferred<ToolResultMessage>();
    let nestedSignal: AbortSignal | undefined;
    const hang = defineTool({
      name: 'hang',
      description: 'waits for its signal',
      input: z.object({}),
      execute: (_args, ctx) => {
        nestedSignal = ctx.signal;
        started.resolve();
        return new Promise<string>((_resolve, reject) =>
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
        );
      },
    });
    const parent = defineTool({
      name: 'caller',
      description: 'calls hang',
      input: z.object({}),
      execute: async (_args, ctx) => {
        nestedResult.resolve(await (ctx.callTool as NonNullable<typeof ctx.callTool>)(hang, {}));
        return 'unreachable';
      },
    });
    const agent = new Agent({
      provider: createScriptedProvider([{ toolCalls: [{ name: 'caller', arguments: {} }] }]),
      model: 'test',
      tools: [parent],
      abortGraceMs: 0,
    });
    const run = agent.run('go');
    await started.promise;
    run.abort();
    const result = await run.result;
    expect(result.stopReason).toBe('aborted');
    expect(nestedSignal?.aborted).toBe(true);
    const nested = await nestedResult.promise;
    expect(nested.isError).toBe(true);
    expect(resultText(nested)).toBe('Cancelled');
    expect(resultText(toolResults(result.messages)[0])).toBe('Cancelled');
  });

  it('holds resource keys: two nested calls on one key never overlap', async () => {
    const log: string[] = [];
    const gates = [deferred(), deferred()];
    let index = 0;
    const locked = defineTool({
      name: 'locked',
      description: 'holds key k',
      input: z.object({}),
      policy: { resourceKey: () => 'k' },
      execute: async () => {
        const mine = index++;
        log.push(`start ${mine}`);
        await gates[mine]?.promise;
        log.push(`end ${mine}`);
        return 'ok';
      },
    });
    const parent = defineTool({
      name: 'caller',
      description: 'two at once',
      input: z.object({}),
      execute: async (_args, ctx) => {
        const call = ctx.callTool as NonNullable<typeof ctx.callTool>;
        const both = Promise.all([call(locked, {}), call(locked, {})]);
        await new Promise((resolve) => setImmediate(resolve));
        log.push('released 0');
        gates[0]?.resolve();
        gates[1]?.resolve();
        await both;
        return 'ok';
      },
    });
    await executeTool(parent, {}, { resourceLocks: new ResourceLocks() });
    expect(log).toEqual(['start 0', 'released 0', 'end 0', 'start 1', 'end 1']);
  });

  it('applies the timeout of the nested tool', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 'never settles on its own',
      input: z.object({}),
      policy: { timeoutMs: 5 },
      execute: (_args, ctx) =>
        new Promise<string>((_resolve, reject) =>
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
        ),
    });
    const parent = defineTool({
      name: 'caller',
      description: 'calls slow',
      input: z.object({}),
      execute: async (_args, ctx) =>
        resultText(await (ctx.callTool as NonNullable<typeof ctx.callTool>)(slow, {})),
    });
    const result = await executeTool(parent, {}, { abortGraceMs: 0 });
    expect(resultText(result)).toBe('Tool exceeded timeout of 5 ms');
  });

  it("a nested call's own signal cancels it alone; one already aborted never starts", async () => {
    const log: string[] = [];
    const hang = defineTool({
      name: 'hang',
      description: 'waits until aborted',
      input: z.object({ id: z.string() }),
      execute: ({ id }, ctx) =>
        new Promise<string>((_resolve, reject) => {
          log.push(`start ${id}`);
          ctx.signal.addEventListener('abort', () => {
            log.push(`aborted ${id}`);
            reject(ctx.signal.reason);
          });
        }),
    });
    const parent = defineTool({
      name: 'caller',
      description: 'calls hang twice under its own signals',
      input: z.object({}),
      execute: async (_args, ctx) => {
        const callTool = ctx.callTool as NonNullable<typeof ctx.callTool>;
        const first = new AbortController();
        const running = callTool(hang, { id: 'a' }, { signal: first.signal });
        await new Promise((resolve) => setImmediate(resolve));
        first.abort();
        const before = AbortSignal.abort();
        const never = await callTool(hang, { id: 'b' }, { signal: before });
        return `${resultText(await running)} | ${resultText(never)} | parent aborted: ${ctx.signal.aborted}`;
      },
    });
    const result = await executeTool(parent, {}, { abortGraceMs: 0 });
    expect(resultText(result)).toBe('Cancelled | Cancelled | parent aborted: false');
    expect(log).toEqual(['start a', 'aborted a']);
  });
});
