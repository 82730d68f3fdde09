import {
  Agent,
  type AgentEvent,
  type AnyAgentTool,
  createPermissionGate,
  defineTool,
  type PermissionApprover,
  type ToolResultMessage,
  toolResultText,
} from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createCodeModeTool } from './code-mode-tool.js';

// A script that starts calls without awaiting them and ends: before, those calls ran on after the
// script's result had gone back to the model (unwatched, past any check of the result), and the
// ones still queued behind `maxConcurrentCalls` started later still. Now the end of the script
// cancels what it left running and nothing queued starts; the result says so.

interface Trace {
  started: string[];
  aborted: string[];
  finished: string[];
}

/** `work({ id })`: waits until aborted, or finishes at once when `quick`. */
function workTool(trace: Trace): AnyAgentTool {
  return defineTool({
    name: 'work',
    description: 'Works on one item until told to stop.',
    input: z.object({ id: z.number(), quick: z.boolean().optional() }),
    policy: { permission: 'read-only' },
    execute: ({ id, quick }, ctx) =>
      new Promise<string>((resolve, reject) => {
        trace.started.push(String(id));
        if (quick === true) {
          trace.finished.push(String(id));
          resolve(`done ${id}`);
          return;
        }
        ctx.signal.addEventListener('abort', () => {
          trace.aborted.push(String(id));
          reject(ctx.signal.reason);
        });
      }),
  });
}

async function runInAgent(
  script: string,
  tools: AnyAgentTool[],
  options: { approver?: PermissionApprover; maxConcurrentCalls?: number } = {},
): Promise<{ result: ToolResultMessage; events: AgentEvent[] }> {
  const events: AgentEvent[] = [];
  const agent = new Agent({
    provider: createScriptedProvider([
      { toolCalls: [{ id: 'script', name: 'run_script', arguments: { script } }] },
      { text: 'done' },
    ]),
    model: 'test',
    tools: [
      createCodeModeTool({
        tools,
        limits: { maxConcurrentCalls: options.maxConcurrentCalls ?? 8 },
      }),
    ],
    onEvent: (event) => events.push(event),
    ...(options.approver === undefined
      ? {}
      : {
          permissionGate: createPermissionGate({
            allow: ['run_script'],
            approver: options.approver,
          }),
        }),
  });
  const run = await agent.run('go').result;
  const result = run.messages.find((message) => message.role === 'toolResult');
  if (result?.role !== 'toolResult') throw new Error('no result');
  return { result, events };
}

/** The nested calls' end events all come before the script's own. */
function endsBeforeParent(events: AgentEvent[]): boolean {
  const parentEnd = events.findIndex(
    (event) => event.type === 'tool-execution-end' && event.toolCallId === 'script',
  );
  const lastChildEnd = events.findLastIndex(
    (event) => event.type === 'tool-execution-end' && event.parentToolCallId === 'script',
  );
  return parentEnd !== -1 && lastChildEnd < parentEnd;
}

describe('calls a script did not await end with it', () => {
  it.each([
    ['returned', 'for (let id = 1; id <= 20; id++) tools.work({ id }); return "bye"', 'bye'],
    ['threw', 'for (let id = 1; id <= 20; id++) tools.work({ id }); throw new Error("oops")', ''],
    [
      'started them in a finally',
      'try { return "bye" } finally { for (let id = 1; id <= 20; id++) tools.work({ id }) }',
      'bye',
    ],
    [
      'started them in microtasks',
      'for (let id = 1; id <= 20; id++) Promise.resolve().then(() => tools.work({ id })); return "bye"',
      'bye',
    ],
    [
      'started them from a then of a finished call',
      'tools.work({ id: 0, quick: true }).then(() => { for (let id = 1; id <= 20; id++) tools.work({ id }) }); await tools.work({ id: 99, quick: true }); return "bye"',
      'bye',
    ],
  ])(
    'a script that %s: running calls are cancelled, queued ones never start',
    async (_name, script, returned) => {
      const trace: Trace = { started: [], aborted: [], finished: [] };
      const { result, events } = await runInAgent(script, [workTool(trace)], {
        maxConcurrentCalls: 3,
      });
      const text = toolResultText(result.content);
      const slow = trace.started.filter((id) => !trace.finished.includes(id));
      // At most the concurrent limit ever started; each of those was told to stop.
      expect(slow.length).toBeGreaterThan(0);
      expect(slow.length).toBeLessThanOrEqual(3);
      expect(trace.aborted.toSorted()).toEqual(slow.toSorted());
      expect(text).toContain(
        '[20 tool calls the script did not await were cancelled when it ended; await every call]',
      );
      if (returned !== '') expect(text.endsWith(`Returned:\n${returned}`)).toBe(true);
      expect(endsBeforeParent(events)).toBe(true);
      // Nothing starts once the script's result is in.
      await new Promise((resolve) => setImmediate(resolve));
      expect(trace.started.length).toBe(slow.length + trace.finished.length);
    },
  );

  it('a call awaiting approval when the script ends never runs; its question is dismissed', async () => {
    const trace: Trace = { started: [], aborted: [], finished: [] };
    let answer: ((value: 'once') => void) | undefined;
    let question: AbortSignal | undefined;
    const { result } = await runInAgent(
      'tools.work({ id: 1, quick: true }); for (let i = 0; i < 3; i++) await null; return "bye"',
      [workTool(trace)],
      {
        approver: (_request, context) => {
          question = context.signal;
          // Answered only after the script has ended.
          return new Promise((resolve) => (answer = resolve));
        },
      },
    );
    expect(question?.aborted).toBe(true);
    answer?.('once');
    await new Promise((resolve) => setImmediate(resolve));
    expect(trace.started).toEqual([]);
    expect(toolResultText(result.content)).toContain('1 tool call the script did not await was');
  });

  it('a script that awaits every call is not told anything', async () => {
    const trace: Trace = { started: [], aborted: [], finished: [] };
    const { result } = await runInAgent(
      'const all = await Promise.all([1, 2, 3].map((id) => tools.work({ id, quick: true }))); return all.join(",")',
      [workTool(trace)],
    );
    expect(toolResultText(result.content)).toBe('done 1,done 2,done 3');
    expect(trace.aborted).toEqual([]);
  });
});
