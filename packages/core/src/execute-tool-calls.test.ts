// executeToolCalls driven directly, without an Agent: one turn's calls in, one result per call out.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { AgentEvent } from './agent-events.js';
import { defineTool } from './define-tool.js';
import { ToolError } from './errors.js';
import {
  type ExecuteToolCallsParams,
  executeToolCalls,
  steeringSkipMessage,
} from './execute-tool-calls.js';
import { type AssistantMessage, emptyUsage, type ToolCallContent } from './messages.js';
import { ResourceLocks } from './resource-locks.js';
import { resultText } from './testing/test-helpers.js';
import type { AnyAgentTool } from './tool.js';
import { ToolRegistry } from './tool-registry.js';

/** An echo tool that counts its runs. */
function countingEcho() {
  const runs: string[] = [];
  const tool = defineTool({
    name: 'echo',
    description: 'Echoes text',
    input: z.object({ text: z.string() }),
    execute: async ({ text }) => {
      runs.push(text);
      return text;
    },
  });
  return { tool, runs };
}

function callsOf(...calls: [name: string, argumentsText: string][]): ToolCallContent[] {
  return calls.map(([name, argumentsText], index) => ({
    type: 'toolCall',
    id: `call_${index}`,
    name,
    arguments: argumentsText,
  }));
}

function paramsFor(
  tools: AnyAgentTool[],
  calls: ToolCallContent[],
  overrides: Partial<ExecuteToolCallsParams> = {},
): ExecuteToolCallsParams & { events: AgentEvent[] } {
  const events: AgentEvent[] = [];
  const assistant: AssistantMessage = {
    role: 'assistant',
    content: calls,
    provider: 'test',
    model: 'test-model',
    usage: emptyUsage(),
    stopReason: 'toolUse',
    timestamp: 0,
  };
  return {
    calls,
    assistant,
    registry: new ToolRegistry(tools),
    strategy: { type: 'parallel' },
    runSignal: new AbortController().signal,
    hooks: {},
    permissionGate: undefined,
    locks: new ResourceLocks(),
    defaultTimeoutMs: 60_000,
    abortGraceMs: 0,
    maxToolCallsPerTurn: Number.POSITIVE_INFINITY,
    emit: (event) => events.push(event),
    steeringPending: () => false,
    events,
    ...overrides,
  };
}

describe('executeToolCalls: one result per call, in call order', () => {
  it('answers an unknown tool, malformed JSON, invalid arguments and a good call, each once', async () => {
    const { tool, runs } = countingEcho();
    const calls = callsOf(
      ['nope', '{}'],
      ['echo', '{"text": '],
      ['echo', '{"text": 1}'],
      ['echo', '{"text": "hi"}'],
    );
    const outcome = await executeToolCalls(paramsFor([tool], calls));
    expect(outcome.results.map((result) => result.toolCallId)).toEqual(
      calls.map((call) => call.id),
    );
    expect(outcome.results.map((result) => result.isError)).toEqual([true, true, true, false]);
    expect(resultText(outcome.results[0])).toContain('Tool not found: nope');
    expect(resultText(outcome.results[1])).toContain('not valid JSON');
    expect(resultText(outcome.results[2])).toContain('Invalid arguments');
    expect(resultText(outcome.results[3])).toBe('hi');
    expect(runs).toEqual(['hi']);
    // Parsed where the JSON parsed, whether or not it then validated.
    expect(outcome.parsedArguments).toEqual([undefined, undefined, { text: 1 }, { text: 'hi' }]);
    expect(outcome.fatal).toBeUndefined();
  });

  it('answers the calls past maxToolCallsPerTurn without running them', async () => {
    const { tool, runs } = countingEcho();
    const calls = callsOf(['echo', '{"text":"a"}'], ['echo', '{"text":"b"}']);
    const outcome = await executeToolCalls(paramsFor([tool], calls, { maxToolCallsPerTurn: 1 }));
    expect(runs).toEqual(['a']);
    expect(outcome.results[1]?.isError).toBe(true);
    expect(resultText(outcome.results[1])).toContain('maxToolCallsPerTurn');
  });
});

describe('executeToolCalls: what stops the later batches', () => {
  it('a queued steering message skips the batches after the first', async () => {
    const { tool, runs } = countingEcho();
    const calls = callsOf(['echo', '{"text":"a"}'], ['echo', '{"text":"b"}']);
    const outcome = await executeToolCalls(
      paramsFor([tool], calls, { strategy: { type: 'sequential' }, steeringPending: () => true }),
    );
    expect(runs).toEqual(['a']);
    expect(resultText(outcome.results[1])).toBe(steeringSkipMessage);
  });

  it('a fatal ToolError is returned, and the calls after it are not run', async () => {
    const { tool, runs } = countingEcho();
    const fatal = defineTool({
      name: 'fatal',
      description: 'ends the run',
      input: z.object({}),
      execute: async () => {
        throw new ToolError('the disk is gone', { fatal: true });
      },
    });
    const calls = callsOf(['fatal', '{}'], ['echo', '{"text":"after"}']);
    const outcome = await executeToolCalls(
      paramsFor([tool, fatal], calls, { strategy: { type: 'sequential' } }),
    );
    expect(outcome.fatal?.message).toContain('the disk is gone');
    expect(runs).toEqual([]);
    expect(resultText(outcome.results[1])).toContain('fatal error');
    expect(outcome.results).toHaveLength(2);
  });

  it('an aborted run answers every call as cancelled without running one', async () => {
    const { tool, runs } = countingEcho();
    const controller = new AbortController();
    controller.abort();
    const calls = callsOf(['echo', '{"text":"a"}'], ['echo', '{"text":"b"}']);
    const outcome = await executeToolCalls(
      paramsFor([tool], calls, { runSignal: controller.signal }),
    );
    expect(runs).toEqual([]);
    expect(outcome.results.map((result) => resultText(result))).toEqual(['Cancelled', 'Cancelled']);
  });
});

describe('executeToolCalls: the gate and the before-hook', () => {
  it('a denied call and a skipped call are answered; the allowed one runs with replaced arguments', async () => {
    const { tool, runs } = countingEcho();
    const calls = callsOf(
      ['echo', '{"text":"deny me"}'],
      ['echo', '{"text":"skip me"}'],
      ['echo', '{"text":"replace me"}'],
    );
    const outcome = await executeToolCalls(
      paramsFor([tool], calls, {
        permissionGate: (request) =>
          (request.args as { text: string }).text === 'deny me'
            ? { behavior: 'deny', reason: 'not this one' }
            : { behavior: 'allow' },
        hooks: {
          beforeToolExecution: (call) => {
            const { text } = call.args as { text: string };
            if (text === 'skip me') return { action: 'skip', reason: 'not now' };
            if (text === 'replace me') return { action: 'replace', args: { text: 'replaced' } };
            return undefined;
          },
        },
      }),
    );
    expect(runs).toEqual(['replaced']);
    expect(resultText(outcome.results[0])).toContain('not this one');
    expect(resultText(outcome.results[1])).toBe('Skipped: not now');
    expect(resultText(outcome.results[2])).toBe('replaced');
  });
});
