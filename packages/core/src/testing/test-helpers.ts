// Test-only helpers shared by the core test files (not exported from the package: `testing/index.ts`
// names what `@agent/core/testing` offers).
import * as z from 'zod';
import { Agent, type AgentRunResult } from '../agent.js';
import type { AgentEvent } from '../agent-events.js';
import type { AgentOptions } from '../agent-options.js';
import { defineTool } from '../define-tool.js';
import type { Message, ToolResultMessage } from '../messages.js';
import type { AnyAgentTool } from '../tool.js';
import {
  createScriptedProvider,
  type ScriptedProvider,
  type ScriptedStep,
} from './scripted-provider.js';

/** An agent (model `test-model`) over a provider that plays `steps`, and that provider. */
export function agentWith(
  steps: ScriptedStep[],
  tools: AnyAgentTool[],
  options: Partial<AgentOptions> = {},
): { provider: ScriptedProvider; agent: Agent } {
  const provider = createScriptedProvider(steps);
  const agent = new Agent({ provider, model: 'test-model', tools, ...options });
  return { provider, agent };
}

/** Runs to the end and returns the result plus every event. */
export async function runToEnd(
  agent: Agent,
  input?: string,
): Promise<{ result: AgentRunResult; events: AgentEvent[] }> {
  const run = agent.run(input);
  const events: AgentEvent[] = [];
  for await (const event of run) events.push(event);
  return { result: await run.result, events };
}

/** The tool results of a conversation. */
export function toolResults(messages: readonly Message[]): ToolResultMessage[] {
  return messages.filter((message): message is ToolResultMessage => message.role === 'toolResult');
}

/** The first text block of a tool result. */
export function resultText(message: ToolResultMessage | undefined): string {
  const block = message?.content[0];
  return block?.type === 'text' ? block.text : '';
}

/** A deferred promise. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A tool that waits `ms` (respecting its signal) and logs start/end with timestamps. */
export function waitTool(
  name: string,
  log: string[],
  options: { ms?: number; policy?: AnyAgentTool['policy'] } = {},
): AnyAgentTool {
  return defineTool({
    name,
    description: `waits then echoes (${name})`,
    input: z.object({ id: z.string(), ms: z.number().optional(), key: z.string().optional() }),
    ...(options.policy === undefined ? {} : { policy: options.policy }),
    execute: async ({ id, ms }, ctx) => {
      log.push(`start:${id}`);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, ms ?? options.ms ?? 0);
        ctx.signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            reject(ctx.signal.reason);
          },
          { once: true },
        );
      });
      log.push(`end:${id}`);
      return `done ${id}`;
    },
  });
}

/** Counts active timers (for leak checks). */
export function activeTimers(): number {
  return process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
}

/** A tool that returns its `text` (alias `say`). */
export const echo = defineTool({
  name: 'echo',
  description: 'Echoes text',
  aliases: ['say'],
  input: z.object({ text: z.string(), limit: z.number().optional() }),
  execute: async ({ text }) => text,
});
