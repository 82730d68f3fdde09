import type { ToolCallInfo } from './agent-options.js';
import { type DirectExecution, directExecutionOf } from './define-tool.js';
import { errorMessage, ToolError } from './errors.js';
import type { ExecuteToolCallsParams } from './execute-tool-calls.js';
import type { ToolCallContent } from './messages.js';
import { nestedToolCaller } from './nested-call.js';
import type { AnyAgentTool, ToolContext, ToolResult } from './tool.js';
import {
  errorResult,
  normaliseResult,
  type Settled,
  toResultMessage,
  withNote,
} from './tool-results.js';

// One tool call from `tool-execution-start` to its result: resource lock, timeout, abort (run,
// sibling, timeout), the grace period of a tool that ignores its signal, the update and
// after-execution hooks. The batch around it lives in execute-tool-calls.ts.

/** A call ready to run: validated, allowed, past the before-hook. */
export interface PreparedCall {
  kind: 'prepared';
  index: number;
  call: ToolCallContent;
  tool: AnyAgentTool;
  info: ToolCallInfo;
  /** What the gate said allowed the call (its `decidedBy`), when it said. */
  allowedBy?: string;
  /** The gate allowed the call only to read (its decision's `readOnly`): `ToolContext.readOnly`. */
  readOnly?: boolean;
  /**
   * Set on a call whose verdict came from a run journal (a resumed run): asks the gate and the
   * before-hook again, as the session stands now, before the call runs live.
   */
  recheck?: () => Promise<PrepareOutcome>;
}

/**
 * What preparing a call (parse, validate, gate, before-hook) came to: ready to run, or already
 * answered — not found, invalid, denied, skipped — with its result.
 */
export type PrepareOutcome = PreparedCall | { kind: 'answered'; settled: Settled };

/** The abort reason of a call cancelled because a sibling with `abortsSiblingsOnError` failed. */
export class SiblingAbort {
  constructor(readonly toolName: string) {}
}

/** The abort reason of a call that ran past its timeout. */
class TimeoutAbort {
  constructor(readonly timeoutMs: number) {}
}

/** Past 2^31-1 ms (24.8 days) Node would fire a timer after 1 ms: such a limit is none. */
const maxTimerMs = 2 ** 31 - 1;

/**
 * Calls that arm the same timeout within this many ms share one timer. Node's timers count
 * whole milliseconds, so separate timers armed that close together fire together anyway.
 */
const sharedTimerSkewMs = 0.5;

/** One call's abort state. Every abort path (run, sibling, timeout) goes through `abort`. */
class RunningCall {
  readonly controller = new AbortController();
  /** The result an abort settled the call with, once aborted. */
  abortedOutcome: ToolResult | undefined;
  /** Settles the call's wait for its tool; set while it waits. */
  settleAborted: ((result: unknown) => void) | undefined;
  /** Set when the call no longer listens to its group (its tool settled or it was aborted). */
  done = false;

  constructor(readonly toolName: string) {}

  abort(reason: unknown): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort(reason);
    const outcome = abortedResult(this.toolName, reason);
    this.abortedOutcome = outcome;
    this.settleAborted?.(outcome);
  }
}

function abortedResult(toolName: string, reason: unknown): ToolResult {
  if (reason instanceof TimeoutAbort)
    return errorResult(ToolError.timeout(toolName, reason.timeoutMs).message, 'timeout');
  if (reason instanceof SiblingAbort)
    return errorResult(
      `Cancelled: aborted because sibling '${reason.toolName}' failed`,
      'cancelled',
    );
  return errorResult('Cancelled', 'cancelled');
}

/** A timer shared by the calls of a batch that armed the same timeout at (nearly) the same time. */
class SharedDeadline {
  readonly #calls: RunningCall[] = [];
  #pending = 0;
  readonly #timer: ReturnType<typeof setTimeout>;
  readonly armedAt = performance.now();

  constructor(
    readonly timeoutMs: number,
    private readonly onIdle: (deadline: SharedDeadline) => void,
  ) {
    this.#timer = setTimeout(() => this.#fire(), timeoutMs);
  }

  get pending(): number {
    return this.#pending;
  }

  join(call: RunningCall): void {
    this.#calls.push(call);
    this.#pending++;
  }

  /** The call no longer needs its timeout; the timer goes when no call does. */
  leave(): void {
    this.#pending--;
    if (this.#pending === 0) {
      clearTimeout(this.#timer);
      this.onIdle(this);
    }
  }

  #fire(): void {
    this.onIdle(this);
    for (const call of this.#calls) {
      if (!call.done) call.abort(new TimeoutAbort(this.timeoutMs));
    }
  }
}

/** By timeout, the deadline that calls arming that timeout now may still share. */
const openDeadlines = new Map<number, SharedDeadline>();

function closeIfOpen(deadline: SharedDeadline): void {
  if (openDeadlines.get(deadline.timeoutMs) === deadline) openDeadlines.delete(deadline.timeoutMs);
}

/**
 * The running calls of one batch: aborting the group aborts each (run abort, sibling failure);
 * the calls' timeouts run on as few timers as possible.
 */
export class CallGroup {
  readonly #calls: RunningCall[] = [];
  #aborted = false;
  reason: unknown;

  get aborted(): boolean {
    return this.#aborted;
  }

  /** Adds a call; aborts it at once if the group is already aborted. */
  add(call: RunningCall): void {
    if (this.#aborted) call.abort(this.reason);
    else this.#calls.push(call);
  }

  abortAll(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.reason = reason;
    for (const call of this.#calls) if (!call.done) call.abort(reason);
    this.#calls.length = 0;
  }

  /**
   * Arms `call`'s timeout: a timer of its own, or the one of calls that armed the same timeout
   * just now — in this batch or another (calls a framework runs through `executeTool` each come
   * in a batch of their own). A deadline aborts only the calls that joined it.
   */
  deadline(call: RunningCall, timeoutMs: number): SharedDeadline {
    let deadline = openDeadlines.get(timeoutMs);
    if (
      deadline === undefined ||
      deadline.pending === 0 ||
      performance.now() - deadline.armedAt > sharedTimerSkewMs
    ) {
      deadline = new SharedDeadline(timeoutMs, closeIfOpen);
      openDeadlines.set(timeoutMs, deadline);
    }
    deadline.join(call);
    return deadline;
  }
}

/**
 * Runs one prepared call to its result and hands it to `record` (with a fatal `ToolError`, if the
 * tool threw one). Never throws.
 */
export async function runCall(
  params: ExecuteToolCallsParams,
  item: PreparedCall,
  group: CallGroup,
  record: (item: PreparedCall, settled: Settled, fatal: ToolError | undefined) => void,
): Promise<void> {
  const { tool, info, call } = item;
  const running = new RunningCall(tool.name);
  const { controller } = running;
  let deadline: SharedDeadline | undefined;
  let release: (() => void) | undefined;
  let fatal: ToolError | undefined;
  let result: ToolResult;
  let started = false;
  let startEmitted = false;
  // Update hooks run in order, chained here; undefined until the first update needs one.
  let updates: Promise<void> | undefined;
  let execution: Promise<unknown> | undefined;
  let stillRunning = false;
  const key = safeResourceKey(tool, info.args);

  group.add(running);
  try {
    if (key !== undefined) release = await params.locks.acquire(key, controller.signal);

    const timeoutMs = tool.policy?.timeoutMs ?? params.defaultTimeoutMs;
    if (Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= maxTimerMs) {
      deadline = group.deadline(running, timeoutMs);
    }

    const { beforeToolExecutionUpdate, afterToolExecutionUpdate } = params.hooks;
    const context: ToolContext = {
      toolCallId: call.id,
      toolName: tool.name,
      signal: controller.signal,
      ...(item.readOnly === true ? { readOnly: true } : {}),
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

    context.callTool = nestedToolCaller(
      params,
      { toolCallId: call.id, toolName: tool.name },
      controller.signal,
    );
    if (params.run !== undefined) context.run = params.run;
    if (params.run?.isPathDenied !== undefined) context.isPathDenied = params.run.isPathDenied;
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
    // A `defineTool` tool's body is awaited and its value finished here: one promise step less.
    const direct = directExecutionOf(tool);
    const pending = startExecution(tool, direct, info.args, context);
    execution = pending;
    // Settled by the tool or by an abort, whichever comes first. A tool that ignores its signal
    // keeps running; its late outcome is dropped here (handled, so never an unhandled rejection).
    let settled: unknown =
      running.abortedOutcome ??
      (await new Promise<unknown>((resolve, reject) => {
        running.settleAborted = resolve;
        pending.then(resolve, reject);
      }));
    const abortedOutcome = running.abortedOutcome;
    if (direct !== undefined && settled !== abortedOutcome) settled = direct.finish(settled);
    result = normaliseResult(settled);
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
      result = abortedResult(tool.name, controller.signal.reason);
    } else if (ToolError.isInstance(error)) {
      if (error.fatal) fatal = error;
      result = errorResult(error.message, error.kind);
    } else {
      result = errorResult(errorMessage(error), 'failed');
    }
  } finally {
    running.done = true;
    deadline?.leave();
    // A key is held until the tool's promise settles, even past a timeout or an abort.
    if (release !== undefined) {
      if (stillRunning && execution !== undefined) {
        const held = release;
        execution.then(held, held);
      } else release();
    }
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
  record(
    item,
    {
      message: toResultMessage(call, tool, result),
      terminate: result.terminate === true && result.isError !== true,
    },
    fatal,
  );
}

/**
 * Calls `execute` (or a `defineTool` tool's body) now, synchronously, and turns a synchronous
 * throw into a rejection.
 */
function startExecution(
  tool: AnyAgentTool,
  direct: DirectExecution | undefined,
  args: unknown,
  context: ToolContext,
): Promise<unknown> {
  try {
    return Promise.resolve(
      direct === undefined ? tool.execute(args, context) : direct.body(args, context),
    );
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
