/**
 * Plan mode (`--mode plan`, `/mode plan`): core's permission mode where only read-only tools run
 * (every other call is denied, whatever the rules say), and the model ends with a plan through
 * `exit_plan_mode`. In the REPL the user approves it and picks the mode the work goes on in —
 * then the same run carries the plan out — or keeps planning; in `-p` the plan is printed and the
 * run stops there.
 */
import {
  type AnyAgentTool,
  defineTool,
  type PermissionMode,
  type PermissionPolicy,
  ToolError,
  type ToolResult,
  terminalSafe,
} from '@agent/core';
import * as z from 'zod';
import {
  droppedKeysNote,
  type OnQuestionReady,
  type RunKeys,
  typingNote,
} from '../ui/terminal-keys.js';

/** What the user answered to a plan: go on in a mode, or keep planning. */
export type PlanAnswer = { type: 'approved'; mode: PermissionMode } | { type: 'keep-planning' };

/** What `exit_plan_mode` keeps in its result's details. */
export interface PlanDetails {
  plan: string;
  /** Set when the user was asked. */
  approved?: boolean;
  /** The mode the user chose with the approval. */
  mode?: PermissionMode;
}

/** Shows a plan to the user and waits for the answer (`undefined`: no one to ask, as in `-p`). */
export type PlanApprover = (plan: string, signal: AbortSignal) => Promise<PlanAnswer>;

/** The note a prompt sent in plan mode starts with, so the model knows what it may do. */
export const planModeNote =
  '[Plan mode: only read-only tools run now; anything that would change files or run commands is refused. Explore what you need, then call exit_plan_mode with your plan for the user to approve. Do not start the work before it is approved.]';

/** A prompt as sent in the session's mode: in plan mode, with the note first. */
export function promptInMode(prompt: string, mode: PermissionMode): string {
  return mode === 'plan' ? `${planModeNote}\n\n${prompt}` : prompt;
}

/**
 * The `exit_plan_mode` tool (Claude Code's `ExitPlanMode` and Kiro's `switch_to_execution` as
 * aliases). Read-only, so it runs in
 * plan mode; `exclusive`, so the question is the only thing on the screen. Outside plan mode it
 * only says so.
 */
export function createExitPlanModeTool(options: {
  policy: () => PermissionPolicy;
  /** Asks the user; absent (`-p`): the plan is printed (`print`) and the run ends. */
  approve?: PlanApprover;
  print?: (plan: string) => void;
}): AnyAgentTool {
  // The run in which the user answered "keep planning" (runs of a session follow one another): they are about to type what to change, so
  // a further plan question in that run (a second call in the same batch, or the model's very
  // next step) would take the first letter they type — the `a` of "add tests first" — as its
  // answer and approve a plan they never read.
  let keptPlanningIn: string | undefined;
  return defineTool({
    name: 'exit_plan_mode',
    // Claude Code's `ExitPlanMode {plan}`; Kiro's `switch_to_execution {plan}` (its planner agent's).
    aliases: ['ExitPlanMode', 'switch_to_execution'],
    label: 'Present the plan',
    description:
      'In plan mode, presents your plan to the user for approval: call it once you have explored enough (read-only) and know what you will do. Give the whole plan in Markdown: the steps, the files you will change and how, and how you will check the result. If the user approves, the session leaves plan mode and you carry the plan out; otherwise revise it.',
    input: z.object({
      plan: z.string().min(1).describe('The plan, in Markdown.'),
    }),
    source: 'builtin',
    policy: { permission: 'read-only', exclusive: true, countsTowardTerminationVote: true },
    execute: async ({ plan }, ctx): Promise<ToolResult<PlanDetails> | string> => {
      const policy = options.policy();
      if (policy.mode !== 'plan')
        return `Not in plan mode (the mode is ${policy.mode}): no approval is needed, go on with the work.`;
      const runId = ctx.run?.runId;
      if (runId !== undefined && keptPlanningIn === runId)
        return {
          content: [
            {
              type: 'text',
              text: 'Not asked: the user chose to keep planning in this run and has not said yet what to change. Stop here and wait for their message.',
            },
          ],
          details: { plan, approved: false },
          terminate: true,
        };
      if (options.approve === undefined) {
        options.print?.(plan);
        return {
          content: [
            {
              type: 'text',
              text: 'The plan was shown to the user. This run cannot ask for approval (-p), so it ends here; do nothing else.',
            },
          ],
          details: { plan },
          terminate: true,
        };
      }
      const answer = await options.approve(plan, ctx.signal);
      if (ctx.signal.aborted) throw ToolError.cancelled('exit_plan_mode');
      if (answer.type === 'keep-planning') {
        keptPlanningIn = runId;
        // The run ends so that the user can type the change: the model's next step is not
        // another question racing their typing.
        return {
          content: [
            {
              type: 'text',
              text: 'The user did not approve the plan yet: stay in plan mode. Their next message says what to change; revise the plan and present it again.',
            },
          ],
          details: { plan, approved: false },
          terminate: true,
        };
      }
      policy.setMode(answer.mode);
      return {
        content: [
          {
            type: 'text',
            text: `The user approved the plan; the permission mode is now ${answer.mode}. Carry the plan out now.`,
          },
        ],
        details: { plan, approved: true, mode: answer.mode },
      };
    },
  });
}

const modesByKey: Record<string, PermissionMode> = {
  a: 'workspace-write',
  d: 'default',
  f: 'full-access',
};

/**
 * The REPL's plan question: the plan, then `[a] approve, edits without asking (workspace-write)
 * [d] approve, ask before each change (default)  [f] approve, full access  [k] keep planning`,
 * one keypress. Ctrl-C (or an aborted run) keeps planning.
 */
export function terminalPlanApprover(
  keys: RunKeys,
  write: (text: string) => void,
  render: (markdown: string) => string = (text) => text,
): PlanApprover {
  return async (plan, signal) => {
    // The model's text: cursor moves and erases in it rewrote the plan being approved.
    write(`\n── Plan ──\n${render(terminalSafe(plan)).trimEnd()}\n──────────\n`);
    write('Approve the plan? ');
    // The answer keys are drawn once the question has been on screen a moment (questionSettleMs).
    const onReady: OnQuestionReady = (dropped) =>
      write(
        `[a] yes, edits without asking (workspace-write)  [d] yes, ask before each change (default)  [f] yes, full access  [k] keep planning (then type what to change) ${droppedKeysNote(dropped)}${typingNote(keys)}`,
      );
    for (let first = true; ; first = false) {
      const key = await keys.nextKey(signal, first ? { onReady } : {});
      if (key === undefined) {
        write('→ keep planning\n');
        return { type: 'keep-planning' };
      }
      const letter = key.trim().charAt(0).toLowerCase();
      if (letter === 'k') {
        write('→ keep planning\n');
        return { type: 'keep-planning' };
      }
      const mode = modesByKey[letter];
      if (mode !== undefined) {
        write(`→ approved; mode ${mode}\n`);
        return { type: 'approved', mode };
      }
    }
  };
}
