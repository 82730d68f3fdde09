import { errorMessage, ToolError } from './errors.js';
import type { ExecuteToolCallsParams } from './execute-tool-calls.js';
import {
  type CallGroup,
  type PreparedCall,
  type PrepareOutcome,
  runCall,
  SiblingAbort,
} from './run-call.js';
import {
  interruptedCallMessage,
  isRepeatable,
  type RunStepValues,
  toolCallFingerprint,
} from './run-journal.js';
import type { RunSteps } from './run-steps.js';
import { type Settled, synthetic } from './tool-results.js';

// A tool call's two journaled steps: its permission verdict (so an answered approval is never
// asked twice) and its result (so a finished call is never run twice, and one that was running
// when its process died is reported as interrupted unless its tool is repeatable).

type Record = (item: PreparedCall, settled: Settled, fatal: ToolError | undefined) => void;

/** The steps of the batch's run; only called when the run has a journal. */
function stepsOf(params: ExecuteToolCallsParams): RunSteps {
  return params.steps as RunSteps;
}

/** Deciders whose "allow" was somebody's answer, which may stand in for the question on resume. */
const answeringDeciders = new Set([undefined, 'approver', 'grant']);

/**
 * The permission gate's and before-hook's verdict on `prepared`, recorded: a denial is replayed
 * as it was. A recorded "allow" is not the last word: a call that is to run live after a resume
 * (it had not started, or it is repeatable) is put to the gate and hook again as the session
 * stands now — the user may have added a deny rule or changed the mode before resuming — with
 * `approvedEarlier` when the allow was an answer for this very call (its name and arguments, not
 * only its id), so an answered question is not asked again.
 */
export async function journaledDecision(
  params: ExecuteToolCallsParams,
  prepared: PreparedCall,
  decide: (approvedEarlier: boolean) => Promise<PrepareOutcome>,
): Promise<PrepareOutcome> {
  const steps = stepsOf(params);
  let live = false;
  // Given in this process: what the gate said of the call beyond "allow" (readOnly) holds.
  let decidedNow: PreparedCall | undefined;
  const value = await steps.step(
    {
      type: 'tool-decision',
      runId: steps.runId,
      turn: params.turn ?? 0,
      index: prepared.index,
      toolCallId: prepared.call.id,
    },
    async (): Promise<RunStepValues['tool-decision']> => {
      live = true;
      const decided = await decide(false);
      if (decided.kind === 'answered') return { allowed: false, result: decided.settled.message };
      decidedNow = decided;
      const answer = answeringDeciders.has(decided.allowedBy)
        ? { answered: true as const, answeredCall: await toolCallFingerprint(prepared.call) }
        : {};
      // A hook that replaced the arguments: the replacement is what runs, on replay too.
      return decided.info.args === prepared.info.args
        ? { allowed: true, ...answer }
        : { allowed: true, ...answer, replacedArgs: decided.info.args };
    },
  );
  if (value === undefined) return decide(false);
  if (!value.allowed) {
    // A refusal recorded for another call (an edited journal) is not handed to this one: the
    // call is still not run (fail closed), with a result of its own saying why.
    if (
      value.result?.toolCallId !== prepared.call.id ||
      value.result.toolName !== prepared.tool.name
    )
      return {
        kind: 'answered',
        settled: synthetic(
          prepared.call,
          prepared.tool,
          'Not run: the run journal refused this call, but its recorded refusal was for another call.',
          'denied',
        ),
      };
    return { kind: 'answered', settled: { message: value.result, terminate: false } };
  }
  if (live) {
    const readOnly = decidedNow?.readOnly === true ? { readOnly: true } : {};
    if (!('replacedArgs' in value)) return { ...prepared, ...readOnly };
    return { ...prepared, ...readOnly, info: { ...prepared.info, args: value.replacedArgs } };
  }
  // Replayed: if the call runs live again, what decides is the session of now. The answer stands
  // for the call it was given for only (a journal without the fingerprint: asked again).
  const answered =
    value.answered === true &&
    typeof value.answeredCall === 'string' &&
    value.answeredCall === (await toolCallFingerprint(prepared.call));
  const recheck = () => decide(answered);
  if (!('replacedArgs' in value)) return { ...prepared, recheck };
  return { ...prepared, info: { ...prepared.info, args: value.replacedArgs }, recheck };
}

/**
 * Runs one prepared call as a journaled step and hands its result to `record`. The journal is
 * asked synchronously (before any await), so the calls of a parallel batch ask in call order.
 * Never throws: a journal that cannot record ends the run (a fatal error), since a result it did
 * not keep could be repeated.
 */
export async function journaledCall(
  params: ExecuteToolCallsParams,
  item: PreparedCall,
  group: CallGroup,
  record: Record,
): Promise<void> {
  const steps = stepsOf(params);
  let value: RunStepValues['tool-result'] | undefined;
  let live = false;
  try {
    value = await steps.step(
      {
        type: 'tool-result',
        runId: steps.runId,
        turn: params.turn ?? 0,
        index: item.index,
        toolCallId: item.call.id,
      },
      (attempt) => {
        live = true;
        return attempt.interrupted && !isRepeatable(item.tool)
          ? Promise.resolve({
              message: synthetic(item.call, item.tool, interruptedCallMessage, 'interrupted')
                .message,
              terminate: false,
            })
          : rechecked(params, item, group);
      },
    );
    if (value !== undefined && !live) {
      const mismatch = replayMismatch(value, item);
      if (mismatch !== undefined) {
        const text = `Not run: the run journal's result for this call was recorded for ${mismatch}, so it is not replayed.`;
        record(
          item,
          synthetic(item.call, item.tool, text, 'failed'),
          new ToolError(
            `The run journal does not match this run: the result recorded for call ${item.call.id} (turn ${params.turn ?? 0}, call ${item.index + 1}) was for ${mismatch}`,
            { toolName: item.tool.name, fatal: true },
          ),
        );
        return;
      }
    }
  } catch (error) {
    const text = `The run journal could not record this call (${errorMessage(error)}); its effects are unknown.`;
    record(
      item,
      synthetic(item.call, item.tool, text, 'failed'),
      new ToolError(`The run journal failed: ${errorMessage(error)}`, {
        toolName: item.tool.name,
        fatal: true,
      }),
    );
    return;
  }
  if (value === undefined) {
    // Unreachable: a result step always records a message. Kept so a bad journal cannot drop one.
    record(
      item,
      synthetic(item.call, item.tool, 'Not executed: internal error', 'failed'),
      undefined,
    );
    return;
  }
  const fatal =
    value.fatal === undefined
      ? undefined
      : new ToolError(value.fatal.message, {
          kind: value.fatal.kind,
          toolName: item.tool.name,
          fatal: true,
        });
  record(item, { message: value.message, terminate: value.terminate }, fatal);
}

/**
 * What a replayed result was recorded for when that is not `item` — another call id or another
 * tool (a journal edited, or a catalogue that resolves the name to another tool now) — else
 * undefined. (Arguments are not compared: a journal's transform may have redacted them in the
 * recorded response, and the result's step is keyed by the call's turn, index and id.)
 */
function replayMismatch(
  value: RunStepValues['tool-result'],
  item: PreparedCall,
): string | undefined {
  const message = value.message as Partial<RunStepValues['tool-result']['message']> | undefined;
  if (message?.toolCallId !== item.call.id)
    return `another call id (${String(message?.toolCallId)})`;
  if (message.toolName !== item.tool.name)
    return `another tool (${String(message.toolName)}, not ${item.tool.name})`;
  return undefined;
}

/**
 * A call about to run live whose verdict was replayed: the gate and hook are asked again first,
 * and a refusal is its result. Otherwise (a verdict given in this process) it simply runs.
 */
async function rechecked(
  params: ExecuteToolCallsParams,
  item: PreparedCall,
  group: CallGroup,
): Promise<RunStepValues['tool-result']> {
  if (item.recheck === undefined) return liveResult(params, item, group);
  const outcome = await item.recheck();
  if (outcome.kind === 'answered')
    return { message: outcome.settled.message, terminate: outcome.settled.terminate };
  return liveResult(params, outcome, group);
}

/** Runs the call now (lock, timeout, hooks, events) and returns what the journal keeps of it. */
async function liveResult(
  params: ExecuteToolCallsParams,
  item: PreparedCall,
  group: CallGroup,
): Promise<RunStepValues['tool-result']> {
  let outcome: RunStepValues['tool-result'] | undefined;
  await runCall(params, item, group, (_, settled, fatal) => {
    // Siblings are cancelled as soon as the failure is known, not once the journal has it (an
    // engine may hand a batch's results back together).
    if (settled.message.isError && item.tool.policy?.abortsSiblingsOnError === true)
      group.abortAll(new SiblingAbort(item.tool.name));
    outcome = { message: settled.message, terminate: settled.terminate };
    if (fatal !== undefined) outcome.fatal = { message: fatal.message, kind: fatal.kind };
  });
  return (
    outcome ?? {
      message: synthetic(item.call, item.tool, 'Not executed: internal error', 'failed').message,
      terminate: false,
    }
  );
}
