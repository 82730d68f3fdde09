import {
  Agent,
  type AgentOptions,
  type AgentStopReason,
  type Message,
  messageText,
  type PermissionDecision,
  type PermissionRequest,
} from '@agent/core';
import * as restate from '@restatedev/restate-sdk';
import { isCancellation, journalValues } from './journal-values.js';
import { RestateRunJournal, type RestateRunJournalOptions } from './restate-journal.js';
import { readCompactions, readMessages, storedBytes, writeMessages } from './session-state.js';

/** What an agent session's object needs of the agent: everything but its conversation, journal and gate. */
export type SessionAgentOptions = Omit<AgentOptions, 'messages' | 'journal' | 'permissionGate'>;

/** Options of {@link agentSession}. */
export interface AgentSessionOptions<Name extends string = 'agent'> {
  /** The virtual object's name, the first segment of its URL (`/agent/<session>/prompt`) [agent]. */
  name?: Name;
  /**
   * The agent of a session: provider, model, tools, system prompt. Called at the start of every
   * attempt of a prompt (a replay too), so it must give the same tools for the same session.
   */
  agent: (session: { sessionId: string }) => SessionAgentOptions | Promise<SessionAgentOptions>;
  /**
   * Which calls wait for a person's answer [none]. Such a call creates a Restate awakeable and
   * waits — minutes or days, through worker restarts — until someone resolves it over HTTP
   * (`POST /restate/awakeables/<id>/resolve` with `{"approved": true}`) or with `answer`.
   */
  needsApproval?: (request: PermissionRequest) => boolean;
  /** Restate options of the object: retry policy, inactivity and abort timeouts. */
  options?: restate.ObjectOptions;
  /**
   * Applied to the JSON text of everything Restate stores for a run (steps, the conversation,
   * questions) [the values of the worker's credential variables become `[redacted:NAME]`];
   * `false`: none. It must keep the text JSON (replace values with plain text).
   * The prompt as sent is stored by Restate before any code of ours runs: see the README.
   */
  redact?: RestateRunJournalOptions['redact'];
  /** Largest step stored, in bytes of JSON [4 MiB]: a larger tool result is clipped. */
  maxStepBytes?: number;
  /**
   * Bytes of JSON of a session's stored conversation past which `prompt` refuses to go on
   * [20 MiB]: Restate loads an object's whole state into every invocation and pauses one whose
   * state passes `worker.invoker.per-invocation-memory-limit` (32 MiB by default) — the session
   * could then not even be read. Raise both together.
   */
  maxSessionBytes?: number;
  /**
   * Bytes of JSON a session's stored conversation may never pass, even in the middle of a prompt
   * [28 MiB, or `maxSessionBytes` + 8 MiB when that is more]: one prompt may add what is left
   * (its tool results are clipped to fit, a prompt or answer that does not fit ends the run with
   * an error saying so). One prompt that added 35 MB of tool results left its session's state
   * past what Restate loads into one invocation: every later call of the session hung. Keep it
   * under `worker.invoker.per-invocation-memory-limit` (32 MiB by default).
   */
  maxStateBytes?: number;
}

/** The input of the `prompt` handler. */
export interface PromptInput {
  prompt: string;
}

/** What `prompt` returns: the run's outcome. */
export interface PromptOutcome {
  runId: string;
  stopReason: AgentStopReason;
  /** The final answer's text (empty when the run did not end with one). */
  text: string;
  /** Model calls the run made (replayed ones included). */
  turns: number;
  error?: string;
}

/** A question waiting for an answer, as the `approvals` handler lists it. */
export interface PendingApproval {
  /** The awakeable to resolve with an {@link ApprovalAnswer}. */
  id: string;
  toolCallId: string;
  toolName: string;
  args: unknown;
  subjects: readonly string[];
}

/** The answer to a {@link PendingApproval}: the payload of the awakeable. */
export interface ApprovalAnswer {
  approved: boolean;
  /** Why not, for the model. */
  reason?: string;
}

const approvalsKey = 'approvals';
/** Largest answer of `messages`, in bytes of JSON: under Restate's 32 MiB message limit. */
const maxPageBytes = 16 * 1024 * 1024;

/** The input of the `messages` handler: a page of the conversation [all of it]. */
export interface MessagesInput {
  /** Index of the first message [0]. */
  from?: number;
  /** How many messages at most [all from `from`]. */
  count?: number;
}

/**
 * An agent session as a Restate virtual object keyed by session id. `prompt` (exclusive: one at a
 * time per session) runs one prompt to its end with every step journaled: a worker that dies
 * mid-run is replaced and the run replayed — no model call paid twice, no finished call run
 * again, a call that was running reported to the model as interrupted unless its tool is
 * repeatable. `messages` and `approvals` (shared: answered while a prompt runs) read the
 * conversation and the questions waiting; `answer` resolves one.
 */
export function agentSession<Name extends string = 'agent'>(options: AgentSessionOptions<Name>) {
  const name = (options.name ?? 'agent') as Name;
  const journalOptions: RestateRunJournalOptions = {
    ...(options.redact === undefined ? {} : { redact: options.redact }),
    ...(options.maxStepBytes === undefined ? {} : { maxStepBytes: options.maxStepBytes }),
  };
  const values = journalValues(journalOptions);
  const maxSessionBytes = options.maxSessionBytes ?? 20 * 1024 * 1024;
  const maxStateBytes =
    options.maxStateBytes ?? Math.max(28 * 1024 * 1024, maxSessionBytes + 8 * 1024 * 1024);
  if (!(maxStateBytes > maxSessionBytes))
    throw new RangeError(
      `maxStateBytes (${maxStateBytes}) must be more than maxSessionBytes (${maxSessionBytes}): a prompt needs room to add to the session`,
    );
  return restate.object({
    name,
    ...(options.options === undefined ? {} : { options: options.options }),
    handlers: {
      prompt: async (ctx: restate.ObjectContext, input: PromptInput): Promise<PromptOutcome> => {
        if (typeof input?.prompt !== 'string')
          throw new restate.TerminalError('prompt needs { "prompt": "…" }', { errorCode: 400 });
        const bytes = await storedBytes(ctx);
        if (bytes > maxSessionBytes)
          throw new restate.TerminalError(
            `The session ${ctx.key} holds ${bytes} bytes of conversation, past the ${maxSessionBytes} it may hold (maxSessionBytes; Restate loads a session's whole state into each invocation, up to worker.invoker.per-invocation-memory-limit): read it with messages { from, count } and go on in a new session, or raise agentSession's maxSessionBytes and maxStateBytes together with that server setting (32 MiB by default)`,
            { errorCode: 413 },
          );
        const messages = await readMessages(ctx);
        const compactions = await readCompactions(ctx);
        // Aborted when Restate cancels the invocation (the journal sees it) and when this attempt
        // ends for any reason: a tool of a finished or abandoned attempt must not keep running.
        const controller = new AbortController();
        const abort = () => controller.abort(new Error('The invocation was cancelled'));
        const attemptOver = ctx.request().attemptCompletedSignal;
        attemptOver.addEventListener('abort', abort, { once: true });
        const agent = new Agent({
          ...(await options.agent({ sessionId: ctx.key })),
          messages,
          ...(compactions.length === 0 ? {} : { compactions }),
          journal: new RestateRunJournal(ctx, {
            ...journalOptions,
            onCancel: abort,
            // What this prompt may add: the conversation must stay loadable by one invocation.
            maxRunBytes: maxStateBytes - bytes,
          }),
          permissionGate: (request) =>
            approvalGate(ctx, request, {
              needsApproval: options.needsApproval,
              redact: values.redact,
              onCancel: abort,
            }),
        });
        // Drawn from the invocation's seeded generator: the same id on every replay.
        const runId = ctx.rand.uuidv4();
        const result = await agent.run(input.prompt, { runId, signal: controller.signal }).result;
        attemptOver.removeEventListener('abort', abort);
        await writeMessages(ctx, {
          messages: agent.messages,
          previousCount: messages.length,
          compactions: agent.compactions,
          redact: values.redact,
        });
        const outcome: PromptOutcome = {
          runId,
          stopReason: result.stopReason,
          text: result.finalMessage === undefined ? '' : messageText(result.finalMessage),
          turns: result.turns,
        };
        if (result.error !== undefined) outcome.error = result.error;
        return outcome;
      },
      messages: restate.handlers.object.shared(
        async (
          ctx: restate.ObjectSharedContext,
          input?: MessagesInput | null,
        ): Promise<Message[]> => {
          const from = input?.from ?? 0;
          const count = input?.count;
          if (
            !Number.isInteger(from) ||
            from < 0 ||
            (count !== undefined && !(Number.isInteger(count) && count >= 0))
          )
            throw new restate.TerminalError(
              'messages takes { "from"?: index ≥ 0, "count"?: n ≥ 0 }',
              {
                errorCode: 400,
              },
            );
          const page = (await readMessages(ctx)).slice(
            from,
            count === undefined ? undefined : from + count,
          );
          const bytes = Buffer.byteLength(JSON.stringify(page), 'utf8');
          // Restate refuses (and retries for ever) an output over its message size limit.
          if (bytes > maxPageBytes)
            throw new restate.TerminalError(
              `${page.length} messages are ${bytes} bytes of JSON, more than one answer may hold (${maxPageBytes}): ask for fewer with { "from", "count" }`,
              { errorCode: 413 },
            );
          return page;
        },
      ),
      approvals: restate.handlers.object.shared(
        async (ctx: restate.ObjectSharedContext): Promise<PendingApproval[]> =>
          Object.values((await ctx.get<Record<string, PendingApproval>>(approvalsKey)) ?? {}),
      ),
      answer: restate.handlers.object.shared(
        async (
          ctx: restate.ObjectSharedContext,
          input: { id: string } & ApprovalAnswer,
        ): Promise<void> => {
          if (typeof input?.id !== 'string' || typeof input.approved !== 'boolean')
            throw new restate.TerminalError('answer needs { "id": "…", "approved": true|false }', {
              errorCode: 400,
            });
          // Only this session's own questions: an awakeable id is global, and an application
          // that lets a user reach their own session's handlers must not let them answer another's.
          const pending = (await ctx.get<Record<string, PendingApproval>>(approvalsKey)) ?? {};
          if (!Object.hasOwn(pending, input.id))
            throw new restate.TerminalError(
              `No question ${input.id} waits in the session ${ctx.key} (the approvals handler lists those that do)`,
              { errorCode: 404 },
            );
          const answer: ApprovalAnswer = { approved: input.approved };
          if (typeof input.reason === 'string') answer.reason = input.reason;
          ctx.resolveAwakeable(input.id, answer);
        },
      ),
    },
  });
}

/** The permission gate of a session: asks a person through an awakeable when `needsApproval` says so. */
async function approvalGate(
  ctx: restate.ObjectContext,
  request: PermissionRequest,
  gate: {
    needsApproval: ((request: PermissionRequest) => boolean) | undefined;
    redact: <T>(value: T) => T;
    onCancel: () => void;
  },
): Promise<PermissionDecision> {
  if (gate.needsApproval?.(request) !== true) return { behavior: 'allow' };
  const { id, promise } = ctx.awakeable<ApprovalAnswer>();
  const pending = (await ctx.get<Record<string, PendingApproval>>(approvalsKey)) ?? {};
  // The arguments are shown to whoever answers, and kept in state while the question waits.
  pending[id] = gate.redact({
    id,
    toolCallId: request.toolCallId,
    toolName: request.toolName,
    args: request.args,
    subjects: request.subjects,
  });
  ctx.set(approvalsKey, pending);
  let answer: ApprovalAnswer | undefined;
  try {
    answer = await promise;
  } catch (error) {
    if (!isCancellation(error)) throw error;
    // Cancelled while the question waited: the run is aborted, the call is not made.
    gate.onCancel();
    answer = { approved: false, reason: 'The invocation was cancelled' };
  }
  const left = (await ctx.get<Record<string, PendingApproval>>(approvalsKey)) ?? {};
  delete left[id];
  ctx.set(approvalsKey, left);
  if (answer?.approved === true) return { behavior: 'allow' };
  return {
    behavior: 'deny',
    reason: typeof answer?.reason === 'string' ? answer.reason : 'the approver said no',
  };
}

/** The `agentSession` object's type, for typed clients (`ingress.objectClient(session, id)`). */
export type AgentSessionObject<Name extends string = 'agent'> = ReturnType<
  typeof agentSession<Name>
>;
