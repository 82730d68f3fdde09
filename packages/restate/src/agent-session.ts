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
import { RestateRunJournal } from './restate-journal.js';

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

const messagesKey = 'messages';
const approvalsKey = 'approvals';

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
  return restate.object({
    name,
    ...(options.options === undefined ? {} : { options: options.options }),
    handlers: {
      prompt: async (ctx: restate.ObjectContext, input: PromptInput): Promise<PromptOutcome> => {
        if (typeof input?.prompt !== 'string')
          throw new restate.TerminalError('prompt needs { "prompt": "…" }', { errorCode: 400 });
        const messages = (await ctx.get<Message[]>(messagesKey)) ?? [];
        const agent = new Agent({
          ...(await options.agent({ sessionId: ctx.key })),
          messages,
          journal: new RestateRunJournal(ctx),
          permissionGate: (request) => approvalGate(ctx, request, options.needsApproval),
        });
        // Drawn from the invocation's seeded generator: the same id on every replay.
        const runId = ctx.rand.uuidv4();
        const result = await agent.run(input.prompt, { runId }).result;
        ctx.set(messagesKey, agent.messages);
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
        async (ctx: restate.ObjectSharedContext): Promise<Message[]> =>
          (await ctx.get<Message[]>(messagesKey)) ?? [],
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
  needsApproval: ((request: PermissionRequest) => boolean) | undefined,
): Promise<PermissionDecision> {
  if (needsApproval?.(request) !== true) return { behavior: 'allow' };
  const { id, promise } = ctx.awakeable<ApprovalAnswer>();
  const pending = (await ctx.get<Record<string, PendingApproval>>(approvalsKey)) ?? {};
  pending[id] = {
    id,
    toolCallId: request.toolCallId,
    toolName: request.toolName,
    args: request.args,
    subjects: request.subjects,
  };
  ctx.set(approvalsKey, pending);
  const answer = await promise;
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
