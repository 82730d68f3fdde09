import type { AgentEvent } from './agent-events.js';
import type { AgentHooks, PermissionGate, ToolCallInfo } from './agent-options.js';
import { errorMessage, ToolError } from './errors.js';
import { validateWithJsonSchema } from './json-schema-validation.js';
import type { AssistantMessage, ToolCallContent, ToolResultMessage } from './messages.js';
import type { ResourceLocks } from './resource-locks.js';
import type { RunContext } from './run-context.js';
import type { ToolExecutionStrategy } from './strategy.js';
import {
  type AnyAgentTool,
  normalisePermissionSubjects,
  type ToolContext,
  type ToolResult,
} from './tool.js';
import type { ToolLookup } from './tool-catalogue.js';
import {
  errorResult,
  normaliseResult,
  quoteRaw,
  type Settled,
  synthetic,
  toResultMessage,
  withNote,
} from './tool-results.js';
import { formatValidationIssues } from './validation.js';

/** The text the model gets for calls skipped because the user queued a message. */
export const steeringSkipMessage = 'Skipped due to queued user message.';

/** Per-call timeout when neither the tool nor the agent sets one, in ms. */
export const defaultToolTimeoutMs = 600_000;
/** How long an aborted tool may take to stop before it is reported as still running, in ms. */
export const defaultAbortGraceMs = 1_000;

export interface ExecuteToolCallsParams {
  calls: readonly ToolCallContent[];
  assistant: AssistantMessage;
  registry: ToolLookup;
  strategy: ToolExecutionStrategy;
  runSignal: AbortSignal;
  hooks: AgentHooks;
  permissionGate: PermissionGate | undefined;
  /** The calling run, handed to each tool as `ctx.run`. */
  run?: RunContext;
  locks: ResourceLocks;
  defaultTimeoutMs: number;
  /** How long an aborted tool may take to stop before it is reported as still running, in ms. */
  abortGraceMs: number;
  maxToolCallsPerTurn: number;
  emit: (event: AgentEvent) => void;
  /** Whether anyone receives events now; when not, the hottest ones are not even built. */
  listening?: () => boolean;
  steeringPending: () => boolean;
}

export interface ExecuteToolCallsOutcome {
  /** One result per call, in call order. */
  results: ToolResultMessage[];
  /** True when at least one call ran and every call voted `terminate`. */
  terminate: boolean;
  /** A fatal `ToolError` thrown by a tool: the run must end. */
  fatal: ToolError | undefined;
  /** Each call's arguments as parsed from JSON, by call index; undefined where not parsed. */
  parsedArguments: unknown[];
}

interface Prepared {
  index: number;
  call: ToolCallContent;
  tool: AnyAgentTool;
  info: ToolCallInfo;
}

class SiblingAbort {
  constructor(readonly toolName: string) {}
}

class TimeoutAbort {
  constructor(readonly timeoutMs: number) {}
}

/**
 * Runs the tool calls of one assistant message under the strategy. Never throws; every call
 * gets exactly one result message, whatever happens.
 */
export async function executeToolCalls(
  params: ExecuteToolCallsParams,
): Promise<ExecuteToolCallsOutcome> {
  const { calls } = params;
  const settled: (Settled | undefined)[] = new Array(calls.length);
  const parsed: unknown[] = new Array(calls.length);
  let fatal: ToolError | undefined;

  const resolved = calls.map((call) => params.registry.get(call.name));
  const overLimit = markOverLimit(resolved, params.maxToolCallsPerTurn);
  const runnable: number[] = [];
  for (let index = 0; index < calls.length; index++) {
    if (overLimit[index]) {
      const message =
        `Not executed: a turn may run at most ${params.maxToolCallsPerTurn} tool calls ` +
        '(maxToolCallsPerTurn). Make fewer calls per turn.';
      settled[index] = synthetic(
        calls[index] as ToolCallContent,
        resolved[index],
        message,
        'failed',
      );
    } else {
      runnable.push(index);
    }
  }

  const batches = planBatches(runnable, params.strategy);
  for (let b = 0; b < batches.length; b++) {
    const batch = batches[b] as number[];
    const skipReason = params.runSignal.aborted
      ? 'cancelled'
      : fatal !== undefined
        ? 'fatal'
        : b > 0 && params.steeringPending()
          ? 'steering'
          : undefined;
    if (skipReason !== undefined) {
      for (const index of batch) {
        const call = calls[index] as ToolCallContent;
        settled[index] =
          skipReason === 'steering'
            ? synthetic(call, resolved[index], steeringSkipMessage, 'cancelled')
            : skipReason === 'fatal'
              ? synthetic(
                  call,
                  resolved[index],
                  `Not executed: the run ended after a fatal error (${fatal?.message})`,
                  'cancelled',
                )
              : synthetic(call, resolved[index], 'Cancelled', 'cancelled');
      }
      continue;
    }
    const outcome = await runBatch(params, batch, resolved, parsed);
    for (const [index, result] of outcome.settled) settled[index] = result;
    fatal ??= outcome.fatal;
  }

  const results = settled.map((entry, index) => {
    if (entry !== undefined) return entry;
    // Unreachable by construction; kept so a bug can never drop a result.
    return synthetic(
      calls[index] as ToolCallContent,
      resolved[index],
      'Not executed: internal error',
      'failed',
    );
  });
  // Advisory tools (countsTowardTerminationVote: false) neither vote yes nor no.
  const voters = results.filter(
    (_, index) => resolved[index]?.policy?.countsTowardTerminationVote !== false,
  );
  return {
    results: results.map((entry) => entry.message),
    terminate: voters.length > 0 && voters.every((entry) => entry.terminate),
    fatal,
    parsedArguments: parsed,
  };
}

function markOverLimit(resolved: readonly (AnyAgentTool | undefined)[], limit: number): boolean[] {
  let counted = 0;
  // The first call of a parallel-safe tool counts; its repeats this turn share its verdict.
  const parallelSafe = new Map<AnyAgentTool, boolean>();
  return resolved.map((tool) => {
    if (tool?.policy?.countsTowardToolCallLimit === false) return false;
    const earlier = tool === undefined ? undefined : parallelSafe.get(tool);
    if (earlier !== undefined) return earlier;
    counted++;
    const over = counted > limit;
    if (tool?.policy?.parallelSafePerTurn === true) parallelSafe.set(tool, over);
    return over;
  });
}

function planBatches(indices: readonly number[], strategy: ToolExecutionStrategy): number[][] {
  switch (strategy.type) {
    case 'sequential':
      return indices.map((index) => [index]);
    case 'parallel':
      return indices.length === 0 ? [] : [[...indices]];
    case 'batched': {
      const batches: number[][] = [];
      for (let start = 0; start < indices.length; start += strategy.size) {
        batches.push(indices.slice(start, start + strategy.size));
      }
      return batches;
    }
    default: {
      const unknown: never = strategy;
      return unknown;
    }
  }
}

async function runBatch(
  params: ExecuteToolCallsParams,
  batch: readonly number[],
  resolved: readonly (AnyAgentTool | undefined)[],
  parsed: unknown[],
): Promise<{ settled: Map<number, Settled>; fatal: ToolError | undefined }> {
  const settled = new Map<number, Settled>();
  const prepared: Prepared[] = [];
  // Preparation (parse, validate, permission, before-hook) runs in call order, so approvals are asked one at a time.
  for (const index of batch) {
    const call = params.calls[index] as ToolCallContent;
    if (params.runSignal.aborted) {
      settled.set(index, synthetic(call, resolved[index], 'Cancelled', 'cancelled'));
      continue;
    }
    // Parse and validate synchronously; only a gate or a before-hook needs an await.
    let outcome = parseAndValidate(params, call, resolved[index], parsed, index);
    if (
      !('message' in outcome) &&
      (params.permissionGate !== undefined || params.hooks.beforeToolExecution !== undefined)
    ) {
      outcome = await gateAndHook(params, call, outcome.tool, outcome.info);
    }
    if ('message' in outcome) settled.set(index, outcome);
    else prepared.push({ index, call, tool: outcome.tool, info: outcome.info });
  }

  const group = new CallGroup();
  const onRunAbort = () => group.abortAll(params.runSignal.reason);
  if (params.runSignal.aborted) onRunAbort();
  else params.runSignal.addEventListener('abort', onRunAbort, { once: true });
  let fatal: ToolError | undefined;
  const runOne = async (item: Prepared) => {
    const result = await runCall(params, item, group);
    settled.set(item.index, result.settled);
    if (result.fatal !== undefined) fatal ??= result.fatal;
    if (result.settled.message.isError && item.tool.policy?.abortsSiblingsOnError === true) {
      group.abortAll(new SiblingAbort(item.tool.name));
    }
  };

  try {
    const serial =
      params.strategy.type === 'sequential' ||
      prepared.some((item) => item.tool.policy?.exclusive === true);
    if (serial) {
      for (const item of prepared) {
        if (group.reason instanceof SiblingAbort) {
          settled.set(
            item.index,
            synthetic(
              item.call,
              item.tool,
              `Not executed: aborted because sibling '${group.reason.toolName}' failed`,
              'cancelled',
            ),
          );
          continue;
        }
        if (params.runSignal.aborted) {
          settled.set(item.index, synthetic(item.call, item.tool, 'Cancelled', 'cancelled'));
          continue;
        }
        await runOne(item);
      }
    } else {
      await Promise.all(prepared.map(runOne));
    }
  } finally {
    params.runSignal.removeEventListener('abort', onRunAbort);
  }
  return { settled, fatal };
}

/** The running calls of one batch: aborting the group aborts each (run abort, sibling failure). */
class CallGroup {
  readonly #calls = new Set<(reason: unknown) => void>();
  #aborted = false;
  reason: unknown;

  get aborted(): boolean {
    return this.#aborted;
  }

  /** Adds a call's abort function; calls it at once if the group is already aborted. */
  add(abort: (reason: unknown) => void): void {
    if (this.#aborted) abort(this.reason);
    else this.#calls.add(abort);
  }

  delete(abort: (reason: unknown) => void): void {
    this.#calls.delete(abort);
  }

  abortAll(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.reason = reason;
    for (const abort of this.#calls) abort(reason);
    this.#calls.clear();
  }
}

type PrepareOutcome = Settled | { tool: AnyAgentTool; info: ToolCallInfo };

function parseAndValidate(
  params: ExecuteToolCallsParams,
  call: ToolCallContent,
  tool: AnyAgentTool | undefined,
  parsed: unknown[],
  index: number,
): PrepareOutcome {
  if (tool === undefined) {
    const error = ToolError.notFound(call.name, params.registry.names());
    return synthetic(call, undefined, error.message, 'not-found');
  }
  let args: unknown;
  const raw = call.arguments.trim();
  const cutOffEmpty =
    raw === '' &&
    params.assistant.stopReason === 'length' &&
    params.calls[params.calls.length - 1] === call;
  try {
    if (cutOffEmpty)
      throw new SyntaxError('no argument text arrived before the output-token limit');
    args = raw === '' ? {} : JSON.parse(raw);
    parsed[index] = args;
  } catch (error) {
    const cutOff =
      params.assistant.stopReason === 'length'
        ? ' The response was cut off by the output-token limit; make the call smaller.'
        : '';
    const detail = `the arguments are not valid JSON (${errorMessage(error)}).${cutOff} Received: ${quoteRaw(call.arguments)}`;
    return synthetic(
      call,
      tool,
      ToolError.invalidArguments(tool.name, detail).message,
      'invalid-args',
    );
  }

  const validated = validateArguments(tool, args);
  if (!validated.ok)
    return synthetic(
      call,
      tool,
      ToolError.invalidArguments(tool.name, validated.detail).message,
      'invalid-args',
    );
  const info: ToolCallInfo = {
    toolCallId: call.id,
    toolName: tool.name,
    requestedName: call.name,
    args: validated.value,
    tool,
    assistantMessage: params.assistant,
  };
  return { tool, info };
}

/** The permission gate, then the beforeToolExecution hook (which may skip or replace the arguments). */
async function gateAndHook(
  params: ExecuteToolCallsParams,
  call: ToolCallContent,
  tool: AnyAgentTool,
  validatedInfo: ToolCallInfo,
): Promise<PrepareOutcome> {
  let info = validatedInfo;
  if (params.permissionGate !== undefined) {
    try {
      const { subjects, opaque } = normalisePermissionSubjects(
        tool.permissionSubjects === undefined ? [] : await tool.permissionSubjects(info.args),
      );
      const decision = await untilAborted(
        params.permissionGate({
          ...info,
          tier: tool.policy?.permission ?? 'full-access',
          subjects,
          ...(opaque === undefined ? {} : { opaque }),
          signal: params.runSignal,
          agentPath: params.run?.agentPath ?? [],
        }),
        params.runSignal,
      );
      // An approval still pending when the run is aborted must not hold the run open.
      if (decision === undefined) return synthetic(call, tool, 'Cancelled', 'cancelled');
      if (decision.behavior === 'deny') {
        return synthetic(
          call,
          tool,
          ToolError.denied(tool.name, decision.reason).message,
          'denied',
        );
      }
    } catch (error) {
      // A tool that refuses its own arguments while naming its subjects (a path outside the
      // workspace) says so with a ToolError; that message is the clearest one for the model.
      if (ToolError.isInstance(error)) return synthetic(call, tool, error.message, error.kind);
      return synthetic(
        call,
        tool,
        ToolError.denied(tool.name, `the permission check failed: ${errorMessage(error)}`).message,
        'denied',
      );
    }
  }

  if (params.hooks.beforeToolExecution !== undefined) {
    let decision: Awaited<ReturnType<NonNullable<AgentHooks['beforeToolExecution']>>>;
    try {
      decision = await params.hooks.beforeToolExecution(info);
    } catch (error) {
      return synthetic(
        call,
        tool,
        `Not executed: the beforeToolExecution hook failed: ${errorMessage(error)}`,
        'failed',
      );
    }
    if (decision?.action === 'skip')
      return synthetic(call, tool, `Skipped: ${decision.reason}`, 'cancelled');
    if (decision?.action === 'replace') {
      const replaced = validateArguments(tool, decision.args);
      if (!replaced.ok) {
        return synthetic(
          call,
          tool,
          ToolError.invalidArguments(tool.name, `(replaced by a hook) ${replaced.detail}`).message,
          'invalid-args',
        );
      }
      info = { ...info, args: replaced.value };
    }
  }
  return { tool, info };
}

function validateArguments(
  tool: AnyAgentTool,
  input: unknown,
): { ok: true; value: unknown } | { ok: false; detail: string } {
  try {
    const args = tool.prepareArguments !== undefined ? tool.prepareArguments(input) : input;
    if (tool.validate !== undefined) {
      const result = tool.validate(args);
      return result.ok
        ? { ok: true, value: result.value }
        : { ok: false, detail: formatValidationIssues(result.issues) };
    }
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      return {
        ok: false,
        detail: `expected a JSON object, received ${Array.isArray(args) ? 'an array' : JSON.stringify(args)}`,
      };
    }
    const result = validateWithJsonSchema(tool.parameters, args);
    return result.ok
      ? { ok: true, value: result.value }
      : { ok: false, detail: formatValidationIssues(result.issues) };
  } catch (error) {
    return { ok: false, detail: errorMessage(error) };
  }
}

async function runCall(
  params: ExecuteToolCallsParams,
  item: Prepared,
  group: CallGroup,
): Promise<{ settled: Settled; fatal: ToolError | undefined }> {
  const { tool, info, call } = item;
  const controller = new AbortController();
  let settleAborted: ((result: ToolResult) => void) | undefined;
  let abortedOutcome: ToolResult | undefined;
  function abortedResult(reason: unknown): ToolResult {
    if (reason instanceof TimeoutAbort)
      return errorResult(ToolError.timeout(tool.name, reason.timeoutMs).message, 'timeout');
    if (reason instanceof SiblingAbort)
      return errorResult(
        `Cancelled: aborted because sibling '${reason.toolName}' failed`,
        'cancelled',
      );
    return errorResult('Cancelled', 'cancelled');
  }
  // Every abort path (run, sibling, timeout) goes through here, so no per-call signal listeners are needed.
  const abortCall = (reason: unknown) => {
    if (controller.signal.aborted) return;
    controller.abort(reason);
    abortedOutcome = abortedResult(reason);
    settleAborted?.(abortedOutcome);
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  let release: (() => void) | undefined;
  let fatal: ToolError | undefined;
  let result: ToolResult;
  let started = false;
  let startEmitted = false;
  // Update hooks run in order, chained here; undefined until the first update needs one.
  let updates: Promise<void> | undefined;
  let execution: Promise<ToolResult> | undefined;
  let stillRunning = false;
  const key = safeResourceKey(tool, info.args);

  group.add(abortCall);
  try {
    if (key !== undefined) release = await params.locks.acquire(key, controller.signal);

    const timeoutMs = tool.policy?.timeoutMs ?? params.defaultTimeoutMs;
    // Past 2^31-1 ms (24.8 days) Node would fire the timer after 1 ms: such a limit is none.
    if (Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= 2 ** 31 - 1) {
      timer = setTimeout(() => abortCall(new TimeoutAbort(timeoutMs)), timeoutMs);
    }

    const { beforeToolExecutionUpdate, afterToolExecutionUpdate } = params.hooks;
    const context: ToolContext = {
      toolCallId: call.id,
      toolName: tool.name,
      signal: controller.signal,
      onUpdate: (partial) => {
        if (beforeToolExecutionUpdate === undefined && afterToolExecutionUpdate === undefined) {
          if (started)
            params.emit({
              type: 'tool-execution-update',
              toolCallId: call.id,
              toolName: tool.name,
              partial,
            });
          return;
        }
        updates = (updates ?? Promise.resolve()).then(async () => {
          try {
            if (
              beforeToolExecutionUpdate !== undefined &&
              (await beforeToolExecutionUpdate(info, partial)) === false
            )
              return;
            if (!started) return;
            params.emit({
              type: 'tool-execution-update',
              toolCallId: call.id,
              toolName: tool.name,
              partial,
            });
            await afterToolExecutionUpdate?.(info, partial);
          } catch {
            // An update hook's failure must not affect the tool; the update is dropped.
          }
        });
      },
      onProgress: (text, progress) => {
        if (!started) return;
        params.emit({
          type: 'progress',
          toolCallId: call.id,
          toolName: tool.name,
          text,
          ...(progress === undefined ? {} : { progress }),
        });
      },
    };

    if (params.run !== undefined) context.run = params.run;
    started = true;
    startEmitted = true;
    if (params.listening?.() !== false)
      params.emit({
        type: 'tool-execution-start',
        toolCallId: call.id,
        toolName: tool.name,
        args: info.args,
      });
    // The last check and the call are in the same synchronous step: an abort from a listener,
    // a sibling or a timer cannot fall between them, so no execute starts after an abort.
    controller.signal.throwIfAborted();
    const running = startExecution(tool, info.args, context);
    execution = running;
    // Settled by the tool or by an abort, whichever comes first. A tool that ignores its signal
    // keeps running; its late outcome is dropped here (handled, so never an unhandled rejection).
    result = normaliseResult(
      abortedOutcome ??
        (await new Promise<ToolResult>((resolve, reject) => {
          settleAborted = resolve;
          running.then(resolve, reject);
        })),
    );
    if (abortedOutcome !== undefined && result === abortedOutcome) {
      // Aborted (timeout, cancel, sibling): give the tool a grace period to stop. One that ignores
      // its signal is reported, and keeps its resource key until it really settles.
      const stopped = await settlesWithin(execution, params.abortGraceMs);
      if (!stopped) {
        stillRunning = true;
        params.emit({
          type: 'tool-execution-orphaned',
          toolCallId: call.id,
          toolName: tool.name,
          graceMs: params.abortGraceMs,
          ...(key === undefined ? {} : { resourceKey: key }),
        });
        result = withNote(
          result,
          `The tool did not stop within ${params.abortGraceMs} ms of being told to; it may still be running` +
            (key === undefined ? '.' : `, and calls on the same resource wait until it stops.`),
        );
      }
    }
  } catch (error) {
    if (controller.signal.aborted && !ToolError.isInstance(error)) {
      result = abortedResult(controller.signal.reason);
    } else if (ToolError.isInstance(error)) {
      if (error.fatal) fatal = error;
      result = errorResult(error.message, error.kind);
    } else {
      result = errorResult(errorMessage(error), 'failed');
    }
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    // A key is held until the tool's promise settles, even past a timeout or an abort.
    if (release !== undefined) {
      if (stillRunning && execution !== undefined) {
        const held = release;
        execution.then(held, held);
      } else release();
    }
    group.delete(abortCall);
  }

  if (updates !== undefined) await updates;
  started = false;
  // A call aborted while waiting for its resource lock never started: no start, so no end event.
  if (startEmitted && params.listening?.() !== false) {
    params.emit({
      type: 'tool-execution-end',
      toolCallId: call.id,
      toolName: tool.name,
      result,
      isError: result.isError === true,
    });
  }
  if (params.hooks.afterToolExecution !== undefined) {
    try {
      result = normaliseResult((await params.hooks.afterToolExecution(info, result)) ?? result);
    } catch (error) {
      result = errorResult(`The afterToolExecution hook failed: ${errorMessage(error)}`, 'failed');
    }
  }
  return {
    settled: {
      message: toResultMessage(call, tool, result),
      terminate: result.terminate === true && result.isError !== true,
    },
    fatal,
  };
}

/** Calls `execute` now (synchronously) and turns a synchronous throw into a rejection. */
function startExecution(
  tool: AnyAgentTool,
  args: unknown,
  context: ToolContext,
): Promise<ToolResult> {
  try {
    return Promise.resolve(tool.execute(args, context));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Whether `promise` settles within `ms` (0: only if it already has, after a microtask turn). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const settled = promise.then(
    () => true,
    () => true,
  );
  const expired = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([settled, expired]);
  } finally {
    clearTimeout(timer);
  }
}

function safeResourceKey(tool: AnyAgentTool, args: unknown): string | undefined {
  try {
    return tool.policy?.resourceKey?.(args);
  } catch {
    return undefined;
  }
}

/** `promise`'s value, or `undefined` as soon as `signal` aborts (a late rejection is ignored). */
function untilAborted<T>(promise: Promise<T> | T, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) {
    Promise.resolve(promise).catch(() => {});
    return Promise.resolve(undefined);
  }
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(promise).then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
