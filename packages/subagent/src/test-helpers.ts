// Test-only helpers (not exported from the package).
import {
  type AgentEvent,
  type AgentRunResult,
  defineTool,
  type Message,
  messageText,
  type ProviderRequest,
  type ToolResultMessage,
} from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import * as z from 'zod';
import { isSubAgentDetails, type SubAgentDetails } from './sub-agent-details.js';

/** A deferred promise. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/** The text of the first user message of a request (a child's task). */
export function firstUserText(request: ProviderRequest): string {
  const first = request.messages.find((message) => message.role === 'user');
  return first === undefined ? '' : messageText(first);
}

/** The last message of a request, when it is a tool result. */
export function lastToolResult(request: ProviderRequest): ToolResultMessage | undefined {
  const last = request.messages[request.messages.length - 1];
  return last?.role === 'toolResult' ? last : undefined;
}

/** The tool results of a conversation. */
export function toolResults(messages: readonly Message[]): ToolResultMessage[] {
  return messages.filter((message): message is ToolResultMessage => message.role === 'toolResult');
}

/** Whether every tool call of a conversation has exactly one result. */
export function everyCallAnswered(messages: readonly Message[]): boolean {
  const calls: string[] = [];
  const answers: string[] = [];
  for (const message of messages) {
    if (message.role === 'assistant') {
      for (const block of message.content) if (block.type === 'toolCall') calls.push(block.id);
    } else if (message.role === 'toolResult') answers.push(message.toolCallId);
  }
  return calls.length === answers.length && calls.every((id) => answers.includes(id));
}

/** A read-only tool that adds two numbers. */
export const addTool = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  policy: { permission: 'read-only' },
  execute: async ({ a, b }) => String(a + b),
});

/** A workspace-write tool that appends a line to a shared list. */
export function noteTool(notes: string[]) {
  return defineTool({
    name: 'note',
    description: 'Writes a note.',
    input: z.object({ text: z.string() }),
    policy: { permission: 'workspace-write' },
    execute: async ({ text }) => {
      notes.push(text);
      return `noted: ${text}`;
    },
  });
}

/** A tool that waits until `parties` calls are inside it at once: it proves the calls overlap. */
export function meetTool(parties: number) {
  let arrived = 0;
  const everyone = deferred();
  return defineTool({
    name: 'meet',
    description: 'Waits for the other parties.',
    input: z.object({ who: z.string() }),
    policy: { permission: 'read-only' },
    execute: async ({ who }) => {
      arrived++;
      if (arrived === parties) everyone.resolve();
      await everyone.promise;
      return `met: ${who}`;
    },
  });
}

/** A tool that reports it started (with its signal) and then runs until its signal aborts. */
export function blockTool(started: (signal: AbortSignal) => void) {
  return defineTool({
    name: 'block',
    description: 'Runs until cancelled.',
    input: z.object({}),
    policy: { permission: 'read-only' },
    execute: (_args, ctx) =>
      new Promise<string>((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        started(ctx.signal);
      }),
  });
}

/** Active Node timers (for "no dangling timers" checks). */
export function activeTimers(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
}

/** Collects events of one type. */
export function eventsOfType<T extends AgentEvent['type']>(
  events: readonly AgentEvent[],
  type: T,
): Extract<AgentEvent, { type: T }>[] {
  return events.filter((event): event is Extract<AgentEvent, { type: T }> => event.type === type);
}

/** The text of a tool result (empty when there is none). */
export function text(message: ToolResultMessage | undefined): string {
  return message === undefined ? '' : messageText(message);
}

/** A result's sub-agent details; throws when it has none. */
export function detailsOf(message: ToolResultMessage | undefined): SubAgentDetails {
  const details = message?.details;
  if (!isSubAgentDetails(details)) throw new Error('expected sub-agent details');
  return details;
}

/** The result message of one call in a run. */
export function resultFor(
  result: AgentRunResult,
  toolCallId: string,
): ToolResultMessage | undefined {
  return toolResults(result.messages).find((message) => message.toolCallId === toolCallId);
}

/** A child script: call `add` once, then report the sum. */
export function addingChild() {
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
export function delegatingParent(tool: string, task: string) {
  return createScriptedProvider([
    {
      toolCalls: [{ id: 'call_sub', name: tool, arguments: { task } }],
      usage: { input: 100, output: 10 },
    },
    (request) => ({ text: `Parent: ${text(lastToolResult(request))}` }),
  ]);
}
