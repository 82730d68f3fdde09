import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  Agent,
  AgentError,
  type AgentRunResult,
  type AgentStopReason,
  errorMessage,
  type Message,
  type PermissionApprover,
  type PermissionMode,
  PermissionPolicy,
} from '@agent/core';
import { type CliOptions, UsageError } from './args.js';
import { CliError } from './cli-error.js';
import { chooseProvider, type ModelChoice } from './providers.js';
import { loadTools, type ToolSet } from './tool-sources.js';
import type { Transcript } from './transcript.js';

/** Everything one CLI session holds: the agent, its permission policy, tools and model. */
export interface Session {
  agent: Agent;
  policy: PermissionPolicy;
  tools: ToolSet;
  model: ModelChoice;
  /** Releases MCP servers and background commands. */
  close(): Promise<void>;
}

/** The exit code for a run's stop reason: 0 completed, 1 error, 3 max-turns, 130 aborted. */
export function exitCodeFor(stopReason: AgentStopReason): number {
  switch (stopReason) {
    case 'completed':
    case 'terminated':
      return 0;
    case 'error':
      return 1;
    case 'max-turns':
      return 3;
    case 'aborted':
      return 130;
    default: {
      const exhaustive: never = stopReason;
      return exhaustive;
    }
  }
}

/** The system prompt when `--system` is not given. */
export function defaultSystemPrompt(cwd: string): string {
  return [
    'You are a careful coding agent working in a terminal.',
    `Your workspace is ${cwd}; file tools take paths relative to it.`,
    'Use the tools to look before you change anything, keep changes small, and say what you did.',
  ].join(' ');
}

/** Reads a conversation saved with `--save` or `/save` (`{ "messages": [...] }`). */
export async function loadConversation(path: string): Promise<Message[]> {
  let data: unknown;
  try {
    data = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new CliError(`Cannot read the conversation ${path}: ${errorMessage(error)}`);
  }
  const messages =
    data !== null && typeof data === 'object' ? (data as { messages?: unknown }).messages : data;
  if (!Array.isArray(messages)) {
    throw new CliError(`The conversation ${path} needs a "messages" array`);
  }
  return messages as Message[];
}

/** Writes the conversation as `{ "messages": [...] }`. */
export async function saveConversation(agent: Agent, path: string): Promise<void> {
  try {
    await writeFile(path, `${JSON.stringify(agent.toJSON(), null, 2)}\n`);
  } catch (error) {
    throw new CliError(`Cannot save the conversation to ${path}: ${errorMessage(error)}`);
  }
}

/** Builds a session from the options; `log` receives setup warnings. */
export async function createSession(
  options: CliOptions,
  settings: {
    mode: PermissionMode;
    approver: PermissionApprover | undefined;
    log: (line: string) => void;
  },
): Promise<Session> {
  let policy: PermissionPolicy;
  try {
    policy = new PermissionPolicy({
      mode: settings.mode,
      allow: options.allow,
      ask: options.ask,
      deny: options.deny,
      ...(settings.approver === undefined ? {} : { approver: settings.approver }),
    });
  } catch (error) {
    // An invalid rule is a mistake on the command line.
    if (AgentError.isInstance(error)) throw new UsageError(error.message);
    throw error;
  }
  const model = await chooseProvider(options);
  const messages = options.resume === undefined ? [] : await loadConversation(options.resume);
  const tools = await loadTools(options, settings.log);
  let agent: Agent;
  try {
    agent = new Agent({
      provider: model.provider,
      model: model.model,
      systemPrompt: options.systemPrompt ?? defaultSystemPrompt(resolve(options.cwd)),
      tools: tools.tools,
      messages,
      permissionGate: policy.gate,
      ...(options.maxTurns === undefined ? {} : { maxTurns: options.maxTurns }),
    });
  } catch (error) {
    await tools.close();
    throw new CliError(errorMessage(error));
  }
  return { agent, policy, tools, model, close: () => tools.close() };
}

/** Runs one prompt, printing the transcript; `onStart` receives the function that aborts this run. */
export async function runPrompt(
  session: Session,
  prompt: string,
  transcript: Transcript,
  hooks: { onStart?: (abort: () => void) => void } = {},
): Promise<AgentRunResult> {
  const unsubscribe = session.agent.subscribe((event) => transcript.onEvent(event));
  try {
    const run = session.agent.run(prompt);
    hooks.onStart?.(() => run.abort(new Error('Interrupted by the user')));
    return await run.result;
  } finally {
    unsubscribe();
  }
}
