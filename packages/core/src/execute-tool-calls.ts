import type { AgentEvent } from './agent-events.js';
import type { AgentHooks, PermissionGate, ToolCallInfo } from './agent-options.js';
import { errorMessage, ToolError } from './errors.js';
import { journaledCall, journaledDecision } from './journaled-call.js';
import { validateWithJsonSchema } from './json-schema-validation.js';
import type { AssistantMessage, ToolCallContent, ToolResultMessage } from './messages.js';
import { neverAborted } from './never-aborted.js';
import type { ResourceLocks } from './resource-locks.js';
import {
  CallGroup,
  type PreparedCall,
  type PrepareOutcome,
  runCall,
  SiblingAbort,
} from './run-call.js';
import type { RunContext } from './run-context.js';
import type { RunSteps } from './run-steps.js';
import type { ToolExecutionStrategy } from './strategy.js';
import { type AnyAgentTool, normalisePermissionSubjects } from './tool.js';
import type { ToolLookup } from './tool-catalogue.js';
import { quoteRaw, type Settled, synthetic } from './tool-results.js';
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
  /** Set for calls another tool makes through `ctx.callTool`: the id of that tool's call. */
  parentToolCallId?: string;
  /** Set with `parentToolCallId`: the name of the tool that made them. */
  parentToolName?: string;
  /** The run's steps; with a journal, each decision and result is recorded before it is used. */
  steps?: RunSteps;
  /** The turn these calls belong to (for the journal's keys). */
  turn?: number;
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
    const refusal = overLimit[index]
      ? `Not executed: a turn may run at most ${params.maxToolCallsPerTurn} tool calls ` +
        '(maxToolCallsPerTurn). Make fewer calls per turn.'
      : overBudget(params, resolved[index]);
    if (refusal !== undefined) {
      settled[index] = synthetic(
        calls[index] as ToolCallContent,
        resolved[index],
        refusal,
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
        : b > 0 &&
            (!isJournaled(params)
              ? params.steeringPending()
              : await (params.steps as RunSteps).steeringSkip(
                  params.turn ?? 0,
                  b,
                  params.steeringPending,
                ))
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
    const batchFatal = await runBatch(params, batch, resolved, parsed, settled);
    fatal ??= batchFatal;
  }

  const results: ToolResultMessage[] = new Array(calls.length);
  // Advisory tools (countsTowardTerminationVote: false) neither vote yes nor no.
  let voters = 0;
  let terminate = true;
  for (let index = 0; index < calls.length; index++) {
    const entry =
      settled[index] ??
      // Unreachable by construction; kept so a bug can never drop a result.
      synthetic(
        calls[index] as ToolCallContent,
        resolved[index],
        'Not executed: internal error',
        'failed',
      );
    results[index] = entry.message;
    if (resolved[index]?.policy?.countsTowardTerminationVote !== false) {
      voters++;
      terminate &&= entry.terminate;
    }
  }
  return { results, terminate: voters > 0 && terminate, fatal, parsedArguments: parsed };
}

/**
 * Whether these calls are journaled steps: the run has a journal, and they are the model's own
 * calls. A call a tool makes through `ctx.callTool` runs inside its parent's step, which is the
 * unit a journal keeps (an engine may not nest steps).
 */
function isJournaled(params: ExecuteToolCallsParams): boolean {
  return params.steps?.journal !== undefined && params.parentToolCallId === undefined;
}

/**
 * Why a call may not run because the run tree's `maxToolCalls` is spent, else undefined (the
 * call is counted). Reserved synchronously: concurrent sub-agents cannot both take the last call.
 */
function overBudget(
  params: ExecuteToolCallsParams,
  tool: AnyAgentTool | undefined,
): string | undefined {
  if (params.run === undefined || tool === undefined) return undefined;
  if (tool.policy?.countsTowardToolCallLimit === false) return undefined;
  const reason = params.run.budget.startToolCall();
  return reason === undefined ? undefined : `Not executed: ${reason}.`;
}

function markOverLimit(resolved: readonly (AnyAgentTool | undefined)[], limit: number): boolean[] {
  let counted = 0;
  // The first call of a parallel-safe tool counts; its repeats this turn share its verdict.
  let parallelSafe: Map<AnyAgentTool, boolean> | undefined;
  return resolved.map((tool) => {
    if (tool?.policy?.countsTowardToolCallLimit === false) return false;
    const earlier = tool === undefined ? undefined : parallelSafe?.get(tool);
    if (earlier !== undefined) return earlier;
    counted++;
    const over = counted > limit;
    if (tool?.policy?.parallelSafePerTurn === true) {
      parallelSafe ??= new Map();
      parallelSafe.set(tool, over);
    }
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

/** Runs one batch; each call's result goes to `settled` at its index. Returns a fatal error, if any. */
async function runBatch(
  params: ExecuteToolCallsParams,
  batch: readonly number[],
  resolved: readonly (AnyAgentTool | undefined)[],
  parsed: unknown[],
  settled: (Settled | undefined)[],
): Promise<ToolError | undefined> {
  const prepared: PreparedCall[] = [];
  // Preparation (parse, validate, permission, before-hook) runs in call order, so approvals are asked one at a time.
  for (const index of batch) {
    const call = params.calls[index] as ToolCallContent;
    if (params.runSignal.aborted) {
      settled[index] = synthetic(call, resolved[index], 'Cancelled', 'cancelled');
      continue;
    }
    // Parse and validate synchronously; only a gate or a before-hook needs an await.
    let outcome = parseAndValidate(params, call, resolved[index], parsed, index);
    if (
      outcome.kind === 'prepared' &&
      (params.permissionGate !== undefined || params.hooks.beforeToolExecution !== undefined)
    ) {
      const validated = outcome;
      outcome = !isJournaled(params)
        ? await gateAndHook(params, validated)
        : await journaledDecision(params, validated, (approvedEarlier) =>
            gateAndHook(params, validated, approvedEarlier),
          );
    }
    switch (outcome.kind) {
      case 'answered':
        settled[index] = outcome.settled;
        break;
      case 'prepared':
        prepared.push(outcome);
        break;
      default: {
        const _exhaustive: never = outcome;
        return _exhaustive;
      }
    }
  }

  // With a journal each call is a recorded step; without one it simply runs.
  const callStep = isJournaled(params) ? journaledCall : runCall;
  const group = new CallGroup();
  const onRunAbort = () => group.abortAll(params.runSignal.reason);
  // A signal that can never abort needs no listener.
  const listens = params.runSignal !== neverAborted;
  if (params.runSignal.aborted) onRunAbort();
  else if (listens) params.runSignal.addEventListener('abort', onRunAbort, { once: true });
  let fatal: ToolError | undefined;
  const record = (item: PreparedCall, result: Settled, callFatal: ToolError | undefined) => {
    settled[item.index] = result;
    if (callFatal !== undefined) fatal ??= callFatal;
    if (result.message.isError && item.tool.policy?.abortsSiblingsOnError === true) {
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
          settled[item.index] = synthetic(
            item.call,
            item.tool,
            `Not executed: aborted because sibling '${group.reason.toolName}' failed`,
            'cancelled',
          );
          continue;
        }
        if (params.runSignal.aborted) {
          settled[item.index] = synthetic(item.call, item.tool, 'Cancelled', 'cancelled');
          continue;
        }
        await callStep(params, item, group, record);
      }
    } else {
      const running: Promise<void>[] = [];
      for (const item of prepared) running.push(callStep(params, item, group, record));
      await Promise.all(running);
    }
  } finally {
    if (listens) params.runSignal.removeEventListener('abort', onRunAbort);
  }
  return fatal;
}

function parseAndValidate(
  params: ExecuteToolCallsParams,
  call: ToolCallContent,
  tool: AnyAgentTool | undefined,
  parsed: unknown[],
  index: number,
): PrepareOutcome {
  if (tool === undefined) {
    const error = ToolError.notFound(call.name, params.registry.names());
    return answered(synthetic(call, undefined, error.message, 'not-found'));
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
    return answered(
      synthetic(call, tool, ToolError.invalidArguments(tool.name, detail).message, 'invalid-args'),
    );
  }

  const validated = validateArguments(tool, args);
  if (!validated.ok)
    return answered(
      synthetic(
        call,
        tool,
        ToolError.invalidArguments(tool.name, validated.detail).message,
        'invalid-args',
      ),
    );
  const info: ToolCallInfo = {
    toolCallId: call.id,
    toolName: tool.name,
    requestedName: call.name,
    args: validated.value,
    tool,
    assistantMessage: params.assistant,
  };
  if (params.parentToolCallId !== undefined) info.parentToolCallId = params.parentToolCallId;
  if (params.parentToolName !== undefined) info.parentToolName = params.parentToolName;
  return { kind: 'prepared', index, call, tool, info };
}

/**
 * The permission gate, then the beforeToolExecution hook (which may skip or replace the
 * arguments). `approvedEarlier`: the gate allowed these arguments through an answer before the
 * run's process stopped (see `PermissionRequest.approvedEarlier`).
 */
async function gateAndHook(
  params: ExecuteToolCallsParams,
  validated: PreparedCall,
  approvedEarlier = false,
): Promise<PrepareOutcome> {
  const { call, tool } = validated;
  let info = validated.info;
  const gated = await askGate(params, call, tool, info, approvedEarlier);
  if (gated.refused !== undefined) return gated.refused;
  const allowedBy = gated.allowedBy;
  let readOnly = gated.readOnly === true;

  if (params.hooks.beforeToolExecution !== undefined) {
    let decision: Awaited<ReturnType<NonNullable<AgentHooks['beforeToolExecution']>>>;
    try {
      decision = await params.hooks.beforeToolExecution(info);
    } catch (error) {
      return answered(
        synthetic(
          call,
          tool,
          `Not executed: the beforeToolExecution hook failed: ${errorMessage(error)}`,
          'failed',
        ),
      );
    }
    if (decision?.action === 'skip')
      return answered(synthetic(call, tool, `Skipped: ${decision.reason}`, 'cancelled'));
    if (decision?.action === 'replace') {
      const replaced = validateArguments(tool, decision.args);
      if (!replaced.ok) {
        return answered(
          synthetic(
            call,
            tool,
            ToolError.invalidArguments(tool.name, `(replaced by a hook) ${replaced.detail}`)
              .message,
            'invalid-args',
          ),
        );
      }
      const changed = !sameArguments(info.args, replaced.value);
      info = { ...info, args: replaced.value };
      // The gate decided on the old arguments: what runs is put to it too (a deny rule on
      // `rm *` holds when a hook turns `ls` into `rm -rf .`; the user is asked about what runs).
      if (changed) {
        const again = await askGate(params, call, tool, info);
        if (again.refused !== undefined) return again.refused;
        // Allowed only to read under either verdict: so it runs.
        readOnly ||= again.readOnly === true;
      }
    }
  }
  return {
    ...validated,
    info,
    ...(allowedBy === undefined ? {} : { allowedBy }),
    ...(readOnly ? { readOnly } : {}),
  };
}

/** Whether two validated argument values are the same JSON. */
function sameArguments(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false;
  }
}

/** The gate's verdict: the answered outcome when the call may not run, else what allowed it. */
type GateAnswer =
  | { refused: PrepareOutcome }
  | { refused?: undefined; allowedBy?: string; readOnly?: boolean };

/** Puts a call to the permission gate. */
async function askGate(
  params: ExecuteToolCallsParams,
  call: PreparedCall['call'],
  tool: AnyAgentTool,
  info: ToolCallInfo,
  approvedEarlier = false,
): Promise<GateAnswer> {
  if (params.permissionGate === undefined) return {};
  try {
    const { subjects, opaque, tier, paths } = normalisePermissionSubjects(
      tool.permissionSubjects === undefined ? [] : await tool.permissionSubjects(info.args),
    );
    const decision = await untilAborted(
      params.permissionGate({
        ...info,
        tier: tier ?? tool.policy?.permission ?? 'full-access',
        subjects,
        ...(opaque === undefined ? {} : { opaque }),
        ...(paths === undefined ? {} : { paths }),
        signal: params.runSignal,
        agentPath: params.run?.agentPath ?? [],
        ...(approvedEarlier ? { approvedEarlier } : {}),
      }),
      params.runSignal,
    );
    // An approval still pending when the run is aborted must not hold the run open.
    if (decision === undefined)
      return { refused: answered(synthetic(call, tool, 'Cancelled', 'cancelled')) };
    if (decision.behavior === 'deny') {
      return {
        refused: answered(
          synthetic(call, tool, ToolError.denied(tool.name, decision.reason).message, 'denied'),
        ),
      };
    }
    return {
      ...(typeof decision.decidedBy === 'string' ? { allowedBy: decision.decidedBy } : {}),
      ...(decision.readOnly === true ? { readOnly: true } : {}),
    };
  } catch (error) {
    // A tool that refuses its own arguments while naming its subjects (a path outside the
    // workspace) says so with a ToolError; that message is the clearest one for the model.
    if (ToolError.isInstance(error))
      return { refused: answered(synthetic(call, tool, error.message, error.kind)) };
    return {
      refused: answered(
        synthetic(
          call,
          tool,
          ToolError.denied(tool.name, `the permission check failed: ${errorMessage(error)}`)
            .message,
          'denied',
        ),
      ),
    };
  }
}

/** A call answered before it could run. */
function answered(settled: Settled): PrepareOutcome {
  return { kind: 'answered', settled };
}

/** `prepareArguments`, then the tool's `validate` or its JSON Schema (also used by tool-runner.ts). */
export function validateArguments(
  tool: AnyAgentTool,
  input: unknown,
): { ok: true; value: unknown } | { ok: false; detail: string } {
  try {
    const args = tool.prepareArguments !== undefined ? tool.prepareArguments(input) : input;
    if (tool.validate !== undefined) {
      const result = tool.validate(args);
      return result.ok ? result : { ok: false, detail: formatValidationIssues(result.issues) };
    }
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      return {
        ok: false,
        detail: `expected a JSON object, received ${Array.isArray(args) ? 'an array' : JSON.stringify(args)}`,
      };
    }
    const result = validateWithJsonSchema(tool.parameters, args);
    return result.ok ? result : { ok: false, detail: formatValidationIssues(result.issues) };
  } catch (error) {
    return { ok: false, detail: errorMessage(error) };
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** `promise`'s value, or `undefined` as soon as `signal` aborts (a late rejection is ignored). */
function untilAborted<T>(promise: Promise<T> | T, signal: AbortSignal): Promise<T | undefined> {
  // A value already decided (a gate that answered synchronously) has nothing to wait for.
  if (!signal.aborted && !isThenable(promise)) return Promise.resolve(promise);
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
