import {
  type AnyAgentTool,
  clipText,
  type DefinedTool,
  defineTool,
  errorMessage,
  fenceUntrusted,
  type ToolContext,
  ToolError,
  type ToolPolicy,
  ToolRegistry,
  type ToolResult,
  untrustedFence,
  untrustedNote,
  withoutUntrustedMarks,
} from '@agent/core';
import * as z from 'zod';
import { callExpression, type DeclarationOptions, toolDeclarations } from './declarations.js';
import { compileQuickJs, type ScriptFailure, type ScriptLimits } from './script-runtime.js';
import { compileScript } from './script-source.js';
import { runScriptInWorker } from './script-thread.js';
import { errorEnvelope, resultEnvelope } from './script-values.js';
import { warmUpCodeMode } from './warm-up.js';

/** Limits of each script; every field is optional. */
export interface CodeModeLimits {
  /** CPU time the interpreter may spend, in ms; time spent awaiting tool calls does not count [5000]. */
  cpuTimeMs?: number;
  /** Memory the script may allocate, in bytes [64 MiB]. */
  memoryBytes?: number;
  /** The interpreter's stack, in bytes [256 KiB]. */
  stackBytes?: number;
  /** Characters of output (console lines and the returned value) kept in the result [20000]. */
  maxOutputChars?: number;
  /** Tool calls one script may make [1000]. */
  maxCalls?: number;
  /** Tool calls of one script running at once; more wait their turn [8]. */
  maxConcurrentCalls?: number;
  /**
   * Characters of one nested call's arguments, as JSON [262144: about the largest call a model
   * writes directly]. The agent's thread reads and validates them, outside the CPU limit.
   */
  maxArgumentChars?: number;
}

/** Options of {@link createCodeModeTool}. */
export interface CodeModeToolOptions extends DeclarationOptions {
  /** The tools a script can call (as of creation). They need not be offered to the model directly. */
  tools: readonly AnyAgentTool[] | ToolRegistry;
  /** Wire name of the tool [run_script]. */
  name?: string;
  /**
   * Where the model reads the tools' TypeScript declarations: in this tool's description
   * (`inline`), or only their names and first sentences there, the rest from `declarations(…)`
   * inside a script (`on-demand`, for large catalogues) [inline].
   */
  declarations?: 'inline' | 'on-demand';
  /** Limits of each script. */
  limits?: CodeModeLimits;
  /** Wall-clock limit of a script, approvals and tool calls included, in ms [the agent's tool timeout]. */
  timeoutMs?: number;
  /** Overrides of the tool's policy [`permission: 'read-only'`: a script can do nothing by itself]. */
  policy?: ToolPolicy<{ script: string }>;
  /**
   * Prepare the runtime in the background now (compile QuickJS, load the TypeScript stripper;
   * once per process), so the first script does not pay for it [true].
   */
  warmUp?: boolean;
}

/** One nested call of a script, in the result's `details`. */
export interface CodeModeCall {
  toolName: string;
  isError: boolean;
  errorKind?: string;
}

/** What a script run reports in `details` (for UIs and logs; never sent to the model). */
export interface CodeModeDetails {
  /** `returned`, or why the script did not. */
  outcome: 'returned' | ScriptFailure;
  /** The nested calls it made, in the order they were started. */
  calls: CodeModeCall[];
  /** Characters of output dropped over `maxOutputChars`. */
  droppedOutputChars: number;
}

/** Names one `declarations(…)` call may ask for; the rest are ignored. */
const maxDescribedNames = 200;

const defaultLimits: Required<CodeModeLimits> = {
  cpuTimeMs: 5_000,
  memoryBytes: 64 * 1024 * 1024,
  stackBytes: 256 * 1024,
  maxOutputChars: 20_000,
  maxCalls: 1_000,
  maxConcurrentCalls: 8,
  maxArgumentChars: 256 * 1024,
};

const input = z.object({
  script: z
    .string()
    .min(1)
    .describe(
      'JavaScript or TypeScript: the body of an async function (top-level await and return work).',
    ),
});

/**
 * A tool that runs a model-written script in an isolated QuickJS runtime where `tools` holds the
 * given tools as async functions. Each nested call goes through the calling loop's own path
 * (`ctx.callTool`: validation, permission gate, hooks, resource locks, timeouts, events tagged
 * with this call's id); what the script prints and returns is the result.
 */
export function createCodeModeTool(
  options: CodeModeToolOptions,
): DefinedTool<{ script: string }, CodeModeDetails> {
  if (options.warmUp !== false) void warmUpCodeMode();
  // A copy, as of now: a registry changed later (given the agent's own, which then gets this tool)
  // let a script call run_script, whose script called it again — a worker per level, eight at
  // each — and call tools its description never declared.
  const registry = new ToolRegistry(
    options.tools instanceof ToolRegistry ? options.tools.list() : options.tools,
  );
  const tools = registry.list();
  const limits = resolveLimits(options.limits);
  const name = options.name ?? 'run_script';
  const mode = options.declarations ?? 'inline';
  // Runs on the agent's thread for each `declarations(…)` of a script: a million names asked
  // for (each call of a loop) must cost it no more than a few.
  const describe = (asked: readonly string[]) => {
    const names = new Set(asked.slice(0, maxDescribedNames));
    const chosen = names.size === 0 ? tools : tools.filter((tool) => names.has(tool.name));
    const unknown = [...names].filter((wanted) => registry.get(wanted) === undefined);
    const shown = unknown.slice(0, 20).map((wanted) => wanted.slice(0, 80).replace(/\s+/g, ' '));
    const more = unknown.length > shown.length ? ` and ${unknown.length - shown.length} more` : '';
    const note = unknown.length === 0 ? '' : `\n// No such tools: ${shown.join(', ')}${more}`;
    return `${toolDeclarations(chosen, options)}${note}`;
  };
  return defineTool({
    name,
    label: 'Run script',
    description: codeModeDescription(tools, limits, mode, options),
    input,
    policy: {
      permission: 'read-only',
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...options.policy,
    },
    execute: async ({ script }, ctx) => runCodeMode(script, ctx, { registry, limits, describe }),
  });
}

function resolveLimits(limits: CodeModeLimits = {}): Required<CodeModeLimits> {
  const resolved = { ...defaultLimits };
  for (const [key, value] of Object.entries(limits) as [keyof CodeModeLimits, unknown][]) {
    if (value === undefined) continue;
    if (typeof value !== 'number' || !(value > 0))
      throw new RangeError(`limits.${key} must be a number > 0, got ${String(value)}`);
    resolved[key] = value;
  }
  return resolved;
}

async function runCodeMode(
  script: string,
  ctx: ToolContext,
  setup: {
    registry: ToolRegistry;
    limits: Required<CodeModeLimits>;
    describe: (names: readonly string[]) => string;
  },
): Promise<ToolResult<CodeModeDetails>> {
  const { callTool } = ctx;
  // Fail closed: without the loop's path a nested call would skip the gate and the hooks.
  if (callTool === undefined) {
    throw new ToolError(
      'Code mode needs ctx.callTool: run this tool through an Agent or executeTool, not by calling execute directly',
      { kind: 'failed', toolName: ctx.toolName },
    );
  }
  const { registry, limits } = setup;
  const calls: CodeModeCall[] = [];
  // Without a warm-up, QuickJS compiles (off the main thread) while the stripper loads.
  void compileQuickJs().catch(() => undefined);
  const compiled = await compileScript(script);
  if (!compiled.ok) {
    return scriptResult(`The script does not parse: ${compiled.message}`, {
      isError: true,
      details: { outcome: 'threw', calls, droppedOutputChars: 0 },
    });
  }
  const slots = new Slots(limits.maxConcurrentCalls);
  // Set once a nested call returned what a third party wrote (an API's body, an MCP server's
  // text): the script sees it plain, so what the script prints is marked again for the model.
  let readUntrusted = false;
  // Aborted when the script ends: a call it started without awaiting must not outlive it (run
  // unwatched after the result went back, or start from the queue later), so the calls still
  // running are cancelled and the queued ones never start.
  const ended = new AbortController();
  const inFlight = new Set<Promise<string>>();
  let cancelledAtEnd = 0;
  const call = async (toolName: string, json: string): Promise<string> => {
    const tool = registry.get(toolName);
    if (tool === undefined) return errorEnvelope('not-found', `Tool not found: ${toolName}`);
    if (calls.length >= limits.maxCalls) {
      return errorEnvelope(
        'failed',
        `Not executed: a script may make at most ${limits.maxCalls} tool calls`,
      );
    }
    const record: CodeModeCall = { toolName: tool.name, isError: false };
    calls.push(record);
    // Built in a loop at no cost to the script, arguments of megabytes (an array of a million
    // wrong items) held the agent's thread for minutes in validation, outside any limit.
    if (json.length > limits.maxArgumentChars) {
      record.isError = true;
      record.errorKind = 'invalid-args';
      return errorEnvelope(
        'invalid-args',
        `Invalid arguments: ${json.length} characters of JSON; a call from a script may have at most ${limits.maxArgumentChars}`,
      );
    }
    let args: unknown;
    try {
      args = JSON.parse(json);
    } catch {
      return errorEnvelope('invalid-args', 'Invalid arguments: not JSON');
    }
    await slots.take();
    try {
      if (ended.signal.aborted) {
        record.isError = true;
        record.errorKind = 'cancelled';
        cancelledAtEnd++;
        return errorEnvelope('cancelled', 'Not executed: the script had ended');
      }
      let message: Awaited<ReturnType<typeof callTool>>;
      try {
        message = await callTool(tool, args, { signal: ended.signal });
      } catch (error) {
        // The loop's path threw (arguments nested too deeply for the host to write back as JSON,
        // a hook that threw): a failed call in the script, never a rejection nothing handles —
        // that ended the whole process.
        record.isError = true;
        record.errorKind = 'failed';
        return errorEnvelope('failed', `The call of ${tool.name} failed: ${errorMessage(error)}`);
      }
      record.isError = message.isError;
      if (message.errorKind !== undefined) record.errorKind = message.errorKind;
      if (ended.signal.aborted && message.errorKind === 'cancelled') cancelledAtEnd++;
      const { content, marked } = withoutUntrustedMarks(message.content);
      if (marked) readUntrusted = true;
      try {
        return resultEnvelope({ ...message, content });
      } catch (error) {
        // A JSON block no JSON can hold (a BigInt, a cycle): an error in the script, not an
        // exception that nothing catches (it ended the whole process).
        record.isError = true;
        record.errorKind = 'failed';
        return errorEnvelope(
          'failed',
          `The result of ${tool.name} cannot be read as JSON: ${errorMessage(error)}`,
        );
      }
    } finally {
      slots.give();
    }
  };
  const host = {
    names: registry.list().map((tool) => tool.name),
    describe: setup.describe,
    call: (toolName: string, json: string): Promise<string> => {
      // `call` never rejects; if it did, the script's call fails and nothing is left unhandled.
      const pending = call(toolName, json).catch((error: unknown) =>
        errorEnvelope('failed', `The call of ${toolName} failed: ${errorMessage(error)}`),
      );
      inFlight.add(pending);
      void pending.finally(() => inFlight.delete(pending));
      return pending;
    },
  };
  const scriptLimits: ScriptLimits = {
    cpuTimeMs: limits.cpuTimeMs,
    memoryBytes: limits.memoryBytes,
    stackBytes: limits.stackBytes,
    maxOutputChars: limits.maxOutputChars,
  };
  const outcome = await runScriptInWorker(compiled.code, host, scriptLimits, ctx.signal);
  ended.abort(new Error('The script ended'));
  // Cancelled calls settle at once (or after the loop's grace period for a tool that ignores its
  // signal): their end events come before this call's, and their locks are released.
  await Promise.allSettled(inFlight);
  if (cancelledAtEnd > 0) {
    outcome.output.add(
      `[${cancelledAtEnd} tool ${cancelledAtEnd === 1 ? 'call' : 'calls'} the script did not await ${cancelledAtEnd === 1 ? 'was' : 'were'} cancelled when it ended; await every call]`,
    );
  }
  const printed = outcome.output.text();
  const details: CodeModeDetails = {
    outcome: outcome.type === 'returned' ? 'returned' : outcome.reason,
    calls,
    droppedOutputChars: outcome.output.dropped,
  };
  if (outcome.type === 'failed') {
    if (outcome.reason === 'aborted') throw ToolError.cancelled(ctx.toolName);
    // What the script threw can be what a third party wrote (`throw new Error(page.text)`): it
    // is fenced like the output, and only the script's own words stay outside.
    const before = printed === '' ? '' : `\n\nOutput before it stopped:\n${printed}`;
    return scriptResult(
      readUntrusted
        ? `The script failed.\n\n${marked(`${outcome.message}${before}`, true)}`
        : `The script failed: ${outcome.message}${before}`,
      { isError: true, details },
    );
  }
  const value =
    outcome.value === undefined
      ? undefined
      : clipText(outcome.value, Math.max(1_000, limits.maxOutputChars - printed.length));
  let text: string;
  if (value === undefined)
    text = printed === '' ? '(no output; the script returned nothing)' : printed;
  else text = printed === '' ? value : `${printed}\n\nReturned:\n${value}`;
  return scriptResult(marked(text, readUntrusted), { details });
}

/**
 * The script's output, fenced as untrusted when it read what a third party wrote: it may repeat
 * that text, and the model must not take it for the user's or the system's words.
 */
function marked(text: string, readUntrusted: boolean): string {
  if (!readUntrusted) return text;
  return `${untrustedNote('SCRIPT', 'a script that read what third parties wrote (an API, an MCP server, the web) through its tool calls')}\n\n${fenceUntrusted(text, untrustedFence('SCRIPT'))}`;
}

function scriptResult(
  text: string,
  options: { isError?: boolean; details: CodeModeDetails },
): ToolResult<CodeModeDetails> {
  const result: ToolResult<CodeModeDetails> = {
    content: [{ type: 'text', text }],
    details: options.details,
  };
  if (options.isError === true) result.isError = true;
  return result;
}

/** A counting semaphore: at most `size` holders at once, the rest wait in order. */
class Slots {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  take(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  give(): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#free++;
    else next();
  }
}

/** The tool's description: what a script is, its rules and limits, and the tools' declarations. */
function codeModeDescription(
  tools: readonly AnyAgentTool[],
  limits: Required<CodeModeLimits>,
  mode: 'inline' | 'on-demand',
  options: DeclarationOptions,
): string {
  const example = tools[0] === undefined ? 'tools.name' : callExpression(tools[0].name);
  const lines = [
    'Runs a short JavaScript or TypeScript program in an isolated sandbox, where the tools below are async functions on the `tools` object. ' +
      'Use it when a task needs several tool calls (loops, filtering, counting, joining results): only what the script prints (console.log) and returns comes back to you, so intermediate results do not fill the conversation.',
    '',
    `- Call a tool with one argument object and await it: \`const result = await ${example}({ ... })\`. A result is the tool's output text, parsed when it is a JSON object or array.`,
    '- Each call is checked and approved exactly like a direct call. A failed or denied call throws a `ToolCallError` (`.kind`: denied, invalid-args, not-found, timeout, cancelled, failed; `.message`); catch it to carry on.',
    '- Top-level `await` and `return` work; run independent calls together with `Promise.all`.',
    '- There is no filesystem, network, require/import, process or timers: only the tools.',
    `- Limits: ${limits.cpuTimeMs} ms of CPU time, ${Math.round(limits.memoryBytes / 1024 / 1024)} MB of memory, ${limits.maxOutputChars} characters of output, ${limits.maxCalls} tool calls of at most ${limits.maxArgumentChars} characters of arguments each.`,
    '- Print or return only what you need (a summary, the matching items), not whole tool outputs.',
  ];
  if (mode === 'on-demand') {
    lines.push(
      '',
      'Tools (get their TypeScript declarations with a script `return declarations("name", …)` before first use):',
      ...tools.map((tool) => `- ${tool.name}: ${firstSentence(tool.description)}`),
    );
  } else {
    lines.push('', '```ts', toolDeclarations(tools, options), '```');
  }
  return lines.join('\n');
}

function firstSentence(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  const end = line.search(/\.(\s|$)/);
  const sentence = end === -1 ? line : line.slice(0, end + 1);
  return sentence.length > 200 ? `${sentence.slice(0, 199)}…` : sentence;
}
