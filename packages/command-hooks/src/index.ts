/**
 * Command hooks, in the format Claude Code users know, as `@agent/core` `AgentHooks`: shell
 * commands run on `PreToolUse` and `PostToolUse` (and, called by the application,
 * `UserPromptSubmit`, `Stop`, `SessionStart`), each getting the event as JSON on stdin.
 *
 * - exit 0: go on; JSON on stdout may decide (`hookSpecificOutput.permissionDecision`: `allow` |
 *   `deny` | `ask`, with `permissionDecisionReason`; `updatedInput` replaces the arguments;
 *   `decision: "block"` with `reason` blocks);
 * - exit 2: block — a PreToolUse call is not run and stderr is what the model reads; for
 *   PostToolUse stderr is added to the result (the tool already ran); for UserPromptSubmit the
 *   prompt is refused;
 * - any other exit, a crash or a timeout: reported to `onError`, not blocking.
 */
import { spawn } from 'node:child_process';
import type { AgentHooks, ToolCallInfo, ToolResult } from '@agent/core';

/** One command of a hook. */
export interface CommandHook {
  type: 'command';
  /** Run with `bash -c` (or `sh -c` without bash) in the working directory. */
  command: string;
  /** Seconds before the command is killed [60]. */
  timeout?: number;
}

/** A matcher (a regular expression over tool names; `*` or empty for all) and its commands. */
export interface HookMatcher {
  matcher?: string;
  hooks: CommandHook[];
}

/** The hooks configuration, by event. */
export interface HooksConfig {
  PreToolUse?: HookMatcher[];
  PostToolUse?: HookMatcher[];
  UserPromptSubmit?: HookMatcher[];
  Stop?: HookMatcher[];
  SessionStart?: HookMatcher[];
}

/** Where and how commands run. */
export interface CommandHookOptions {
  /** Working directory of the commands (and `cwd` in the event). */
  cwd: string;
  /** A session id to put in the events. */
  sessionId?: string;
  /** Extra environment; `AGENT_PROJECT_DIR` is set to `cwd`. */
  env?: Record<string, string>;
  /** Non-blocking failures (a crash, a timeout, an exit other than 0 and 2). */
  onError?: (error: Error) => void;
}

/** What one command did. */
export interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

const eventNames = [
  'PreToolUse',
  'PostToolUse',
  'UserPromptSubmit',
  'Stop',
  'SessionStart',
] as const;
type EventName = (typeof eventNames)[number];

/** Checks a hooks configuration; throws with the place of the first problem. */
export function checkHooksConfig(value: unknown, where = 'hooks'): HooksConfig {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`${where} must be an object of events`);
  for (const [event, matchers] of Object.entries(value)) {
    if (!eventNames.includes(event as EventName))
      throw new Error(`${where}: unknown event "${event}" (known: ${eventNames.join(', ')})`);
    if (!Array.isArray(matchers)) throw new Error(`${where}.${event} must be a list`);
    matchers.forEach((entry: unknown, index) => {
      const at = `${where}.${event}[${index}]`;
      const record = entry as Partial<HookMatcher>;
      if (typeof entry !== 'object' || entry === null || !Array.isArray(record.hooks))
        throw new Error(`${at} needs "hooks": a list of commands`);
      if (record.matcher !== undefined) {
        if (typeof record.matcher !== 'string') throw new Error(`${at}.matcher must be a string`);
        try {
          new RegExp(record.matcher);
        } catch {
          throw new Error(`${at}.matcher is not a valid regular expression`);
        }
      }
      record.hooks.forEach((hook, hookIndex) => {
        if (hook?.type !== 'command' || typeof hook.command !== 'string' || hook.command === '')
          throw new Error(`${at}.hooks[${hookIndex}] needs type "command" and a "command"`);
        if (hook.timeout !== undefined && !(typeof hook.timeout === 'number' && hook.timeout > 0))
          throw new Error(`${at}.hooks[${hookIndex}].timeout must be a positive number of seconds`);
      });
    });
  }
  return value as HooksConfig;
}

function matches(matcher: string | undefined, toolName: string | undefined): boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return true;
  if (toolName === undefined) return false;
  return new RegExp(`^(?:${matcher})$`).test(toolName);
}

/** Runs one command with the event on stdin. */
export function runHookCommand(
  hook: CommandHook,
  event: Record<string, unknown>,
  options: Pick<CommandHookOptions, 'cwd' | 'env'>,
): Promise<HookRun> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', hook.command], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env, AGENT_PROJECT_DIR: options.cwd },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.length < 100_000) stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 100_000) stderr += chunk;
    });
    const timer = setTimeout(
      () => {
        timedOut = true;
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      },
      (hook.timeout ?? 60) * 1000,
    );
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: `${stderr}${error.message}`, timedOut });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify(event));
  });
}

interface Verdict {
  block?: string;
  allow?: boolean;
  updatedInput?: unknown;
  feedback: string[];
}

function parseOutput(stdout: string): Record<string, unknown> | undefined {
  const text = stdout.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The application's side of a session's hooks: tool hooks for the agent, the rest to call. */
export interface CommandHooks {
  /** PreToolUse and PostToolUse, for `AgentOptions.hooks`. */
  agentHooks: AgentHooks;
  /** UserPromptSubmit: `{ block: reason }` refuses the prompt; `context` is text to add to it. */
  userPromptSubmit(prompt: string): Promise<{ block?: string; context: string }>;
  /** Stop: `{ block: reason }` asks the agent to go on, with the reason as the next message. */
  stop(stopReason: string): Promise<{ block?: string }>;
  /** SessionStart: text to add to the context. */
  sessionStart(source: 'startup' | 'resume'): Promise<{ context: string }>;
}

/** Turns a hooks configuration into hooks for an agent and an application. */
export function commandHooks(config: HooksConfig, options: CommandHookOptions): CommandHooks {
  const base = () => ({
    session_id: options.sessionId ?? '',
    cwd: options.cwd,
  });
  const run = async (
    event: EventName,
    toolName: string | undefined,
    payload: Record<string, unknown>,
  ): Promise<Verdict> => {
    const verdict: Verdict = { feedback: [] };
    for (const entry of config[event] ?? []) {
      if (!matches(entry.matcher, toolName)) continue;
      for (const hook of entry.hooks) {
        const result = await runHookCommand(
          hook,
          { ...base(), hook_event_name: event, ...payload },
          options,
        );
        if (result.timedOut) {
          options.onError?.(
            new Error(`${event} hook timed out after ${hook.timeout ?? 60} s: ${hook.command}`),
          );
          continue;
        }
        if (result.code === 2) {
          verdict.block ??= result.stderr.trim() || `Blocked by a ${event} hook (${hook.command})`;
          continue;
        }
        if (result.code !== 0) {
          options.onError?.(
            new Error(
              `${event} hook exited with ${String(result.code)}: ${hook.command}${result.stderr === '' ? '' : `: ${result.stderr.trim()}`}`,
            ),
          );
          continue;
        }
        const output = parseOutput(result.stdout);
        if (output === undefined) {
          if (result.stdout.trim() !== '') verdict.feedback.push(result.stdout.trim());
          continue;
        }
        const specific = (output.hookSpecificOutput ?? {}) as Record<string, unknown>;
        const decision = specific.permissionDecision ?? output.decision;
        const reason = String(
          specific.permissionDecisionReason ?? output.reason ?? `decided by a ${event} hook`,
        );
        if (decision === 'deny' || decision === 'block') verdict.block ??= reason;
        else if (decision === 'ask')
          verdict.block ??= `${reason} (the hook asks for approval; there is no one to ask here)`;
        else if (decision === 'allow' || decision === 'approve') verdict.allow = true;
        if (specific.updatedInput !== undefined) verdict.updatedInput = specific.updatedInput;
        if (typeof specific.additionalContext === 'string')
          verdict.feedback.push(specific.additionalContext);
      }
    }
    return verdict;
  };

  const agentHooks: AgentHooks = {};
  if ((config.PreToolUse ?? []).length > 0) {
    agentHooks.beforeToolExecution = async (call: ToolCallInfo) => {
      const verdict = await run('PreToolUse', call.toolName, {
        tool_name: call.toolName,
        tool_input: call.args,
      });
      if (verdict.block !== undefined) return { action: 'skip', reason: verdict.block };
      if (verdict.updatedInput !== undefined)
        return { action: 'replace', args: verdict.updatedInput };
      return undefined;
    };
  }
  if ((config.PostToolUse ?? []).length > 0) {
    agentHooks.afterToolExecution = async (call: ToolCallInfo, result: ToolResult) => {
      const verdict = await run('PostToolUse', call.toolName, {
        tool_name: call.toolName,
        tool_input: call.args,
        tool_response: { content: result.content, isError: result.isError === true },
      });
      const notes = [...(verdict.block === undefined ? [] : [verdict.block]), ...verdict.feedback];
      if (notes.length === 0) return undefined;
      return {
        ...result,
        content: [...result.content, { type: 'text', text: `[hook] ${notes.join('\n')}` }],
      };
    };
  }
  return {
    agentHooks,
    userPromptSubmit: async (prompt) => {
      const verdict = await run('UserPromptSubmit', undefined, { prompt });
      return {
        ...(verdict.block === undefined ? {} : { block: verdict.block }),
        context: verdict.feedback.join('\n'),
      };
    },
    stop: async (stopReason) => {
      const verdict = await run('Stop', undefined, { stop_reason: stopReason });
      return verdict.block === undefined ? {} : { block: verdict.block };
    },
    sessionStart: async (source) => {
      const verdict = await run('SessionStart', undefined, { source });
      return { context: verdict.feedback.join('\n') };
    },
  };
}
