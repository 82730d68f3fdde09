// bash_output: reads (and stops) a command bash started in the background.
import { type DefinedTool, defineTool, ToolError, type ToolResult } from '@agent/core';
import * as z from 'zod';
import type { BackgroundTasks } from './background-tasks.js';
import {
  type BashDetails,
  detailsOf,
  formatStreams,
  plantedNote,
  sandboxNote,
} from './bash-output-format.js';
import { analyzeShellCommand } from './shell-analysis.js';

/** Options of {@link createBashOutputTool}. */
export interface BashOutputToolOptions {
  /** The registry the bash tool starts background commands in. */
  backgroundTasks: BackgroundTasks;
}

/** Arguments of the bash_output tool. */
export interface BashOutputArgs {
  task_id: string;
  kill?: boolean | undefined;
}

/**
 * The `bash_output` tool: status, exit code and head/tail output of a background command;
 * with `kill: true` it ends the command's whole process group first.
 */
export function createBashOutputTool(
  options: BashOutputToolOptions,
): DefinedTool<BashOutputArgs, BashDetails> {
  const tasks = options.backgroundTasks;
  return defineTool({
    name: 'bash_output',
    label: 'Background command output',
    description:
      'Reads the output and status of a command started with bash run_in_background; "kill": true ends it (its whole process group).',
    input: z.object({
      task_id: z.string().describe('The task id bash returned, e.g. "bg-1".'),
      kill: z.boolean().optional().describe('Kill the command before reading its output.'),
    }),
    source: 'builtin',
    policy: { permission: 'full-access', minimumPermission: 'read-only' },
    // Reading a task this session started only reads; killing it ends only the session's own
    // processes. Rules about its command still apply (its subjects).
    permissionSubjects: (args) => {
      const task = tasks.get(args.task_id);
      const tier = args.kill === true ? 'workspace-write' : 'read-only';
      return task === undefined
        ? { subjects: [], tier }
        : { ...analyzeShellCommand(task.command), tier };
    },
    execute: async (args): Promise<ToolResult<BashDetails>> => {
      const task = tasks.get(args.task_id);
      if (task === undefined) {
        const known = tasks.list().map((t) => t.id);
        throw new ToolError(
          `No background task ${args.task_id}.${known.length > 0 ? ` Known tasks: ${known.join(', ')}` : ''}`,
        );
      }
      if (args.kill === true && task.outcome === undefined) {
        await task.handle.kill('request');
        task.outcome = await task.handle.done;
      }
      const stdout = task.stdout.snapshot();
      const stderr = task.stderr.snapshot();
      const outcome = task.outcome;
      const status =
        outcome === undefined
          ? `Task ${task.id} is running (pid ${task.handle.pid ?? '?'}).`
          : `Task ${task.id} ${args.kill === true ? 'was killed' : 'has ended'}: exit code ${outcome.exitCode ?? 'unknown'}${outcome.signal ? ` (signal ${outcome.signal})` : ''}.`;
      const body = formatStreams(stdout, stderr);
      const details = detailsOf(
        outcome ?? { exitCode: null, signal: null, timedOut: false, aborted: false },
        stdout,
        stderr,
        Date.now() - task.startedAt,
      );
      details.taskId = task.id;
      // A task that ended on its own with a non-zero exit failed; one killed on request did not.
      const failed = outcome !== undefined && args.kill !== true && outcome.exitCode !== 0;
      // A failure the sandbox caused says so, as bash's own results do.
      const blocked =
        failed && task.sandbox !== undefined
          ? sandboxNote(task.sandbox, { stdout: stdout.text, stderr: stderr.text }, outcome)
          : undefined;
      if (blocked !== undefined) details.sandboxBlocked = blocked;
      // What sandboxed commands made for the user's git or shell, as bash's own results say.
      const planted = outcome === undefined ? [] : (task.sandbox?.checkPlanted?.() ?? []);
      if (planted.length > 0) details.sandboxPlanted = planted;
      const text =
        (body === '' ? `${status}\n(no output yet)` : `${body}\n${status}`) +
        (blocked === undefined ? '' : `\n${blocked}`) +
        plantedNote(
          planted,
          outcome === undefined ? undefined : task.sandbox?.plantedCheckIncomplete?.(),
        );
      return {
        content: [{ type: 'text', text }],
        details,
        ...(failed ? { isError: true } : {}),
      };
    },
  });
}
