import { randomUUID } from 'node:crypto';
import { type DefinedTool, defineTool, ToolError, type ToolResult } from '@agent/core';
import * as z from 'zod';
import { BackgroundTasks } from './background-tasks.js';
import { buffersFor, startCommand } from './bash-command.js';
import {
  type BashDetails,
  detailsOf,
  finishedResult,
  formatStreams,
  startedResult,
} from './bash-output-format.js';
import {
  type BashToolOptions,
  defaultSpillMaxAgeMs,
  settingsForRun,
  settingsOf,
} from './bash-settings.js';
import { bashCallTier } from './bash-tier.js';
import { removeStaleSpillFiles } from './output-buffer.js';
import { seedArguments, seedToolNames } from './seed-names.js';
import { analyzeShellCommand } from './shell-analysis.js';
import { shellTouchedPaths } from './shell-paths.js';

/** Arguments of the bash tool. */
export interface BashArgs {
  command: string;
  timeout?: number | undefined;
  description?: string | undefined;
  run_in_background?: boolean | undefined;
  dangerouslyDisableSandbox?: boolean | undefined;
}

const bashInput = z.object({
  command: z.string().min(1).describe('The command line, run with `bash -c`.'),
  timeout: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Time limit in milliseconds (default 120000, at most 600000).'),
  description: z
    .string()
    .optional()
    .describe('Five to ten words saying what the command does, for the user.'),
  run_in_background: z
    .boolean()
    .optional()
    .describe('Start the command and return at once with a task id; read it with bash_output.'),
  dangerouslyDisableSandbox: z
    .boolean()
    .optional()
    .describe(
      'Run outside the OS sandbox. Only when a command failed because the sandbox blocked it and it truly needs to; the user is always asked.',
    ),
});

/**
 * The `bash` tool: runs a command line in its own process group with a time limit (ms), streams
 * output through `onUpdate`, keeps head and tail of large output in memory and the whole of it
 * in a spill file. A non-zero exit is an `isError` result that still carries the output. Permission subjects are the commands and
 * file redirections of the parsed command line.
 */
export function createBashTool(options: BashToolOptions): DefinedTool<BashArgs, BashDetails> {
  const background = options.backgroundTasks ?? new BackgroundTasks();
  const settings = settingsOf(options, background.spillDirectory);
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 120_000;
  const maxTimeoutMs = options.maxTimeoutMs ?? 600_000;
  const updateIntervalMs = options.updateIntervalMs ?? 250;
  const spillMaxAgeMs = options.spillMaxAgeMs ?? defaultSpillMaxAgeMs;
  // Best effort and in the background: never delays or fails tool creation. Session directories
  // are removed whole; loose files are from a caller's directory or from older versions.
  if (spillMaxAgeMs !== Number.POSITIVE_INFINITY)
    void removeStaleSpillFiles(settings.spill.sharedRoot ?? settings.spill.path, spillMaxAgeMs);
  return defineTool({
    name: 'bash',
    aliases: seedToolNames.bash,
    prepareArguments: seedArguments('bash'),
    label: 'Bash',
    description: [
      'Runs a bash command line in the workspace and returns its exit code, stdout and stderr.',
      `Time limit: "timeout" in milliseconds (default ${defaultTimeoutMs}, max ${maxTimeoutMs}); the whole process group is killed when it runs out.`,
      'Large output is cut to its head and tail; the full output is saved to a file whose path is given.',
      'A non-zero exit code marks the result as failed; its output is returned all the same. Stdin is closed.',
      'Use run_in_background for servers and long jobs, then bash_output to read or kill them.',
      `Commands are ${settings.sandbox.describe()}.`,
    ].join(' '),
    input: bashInput,
    source: 'builtin',
    policy: {
      // A call needs less when it only reads, or runs in the sandbox (see `bashCallTier`).
      permission: 'full-access',
      minimumPermission: 'read-only',
      // Our own timeout fires first and reports partial output; this is the loop's backstop.
      timeoutMs: maxTimeoutMs + settings.killGraceMs + 10_000,
    },
    permissionSubjects: async (args) => {
      const analysis = analyzeShellCommand(args.command);
      const unsandboxed = args.dangerouslyDisableSandbox === true;
      // Path rules cover the files the line names: `deny read_file(.env)` also denies `cat .env`.
      const touched = await shellTouchedPaths(args.command, {
        cwd: settings.cwd,
        home: settings.env.HOME,
      });
      const paths =
        (touched.read?.length ?? 0) + (touched.write?.length ?? 0) === 0 ? {} : { paths: touched };
      // Running outside an active sandbox is its own permission: always asked, never a rule's.
      if (unsandboxed && settings.sandbox.status.active) {
        return {
          subjects: analysis.subjects,
          opaque: 'runs outside the OS sandbox',
          tier: 'full-access',
          ...paths,
        };
      }
      const { tier } = await bashCallTier(args.command, {
        sandbox: settings.sandbox.status,
        cwd: settings.cwd,
        unsandboxed,
        searchPath: settings.env.PATH,
      });
      return { ...analysis, tier, ...paths };
    },
    execute: async (args, ctx): Promise<ToolResult<BashDetails>> => {
      const unsandboxed = args.dangerouslyDisableSandbox === true;
      // A call allowed only to read runs where it cannot write (see settingsForRun).
      const run = settingsForRun(settings, ctx);
      if (args.run_in_background === true) {
        const task = await background.start(args.command, run, { unsandboxed });
        if (task.handle.pid === undefined) {
          const outcome = await task.handle.done;
          throw new ToolError(`Could not start ${settings.shell}: ${outcome.spawnError?.message}`);
        }
        return startedResult(task);
      }
      const timeoutMs = Math.min(args.timeout ?? defaultTimeoutMs, maxTimeoutMs);
      const started = Date.now();
      const buffers = buffersFor(run, randomUUID().slice(0, 8));
      let lastUpdate = 0;
      let pendingUpdate: NodeJS.Timeout | undefined;
      const sendUpdate = () => {
        pendingUpdate = undefined;
        lastUpdate = Date.now();
        ctx.onUpdate({
          content: [
            {
              type: 'text',
              text: formatStreams(buffers.stdout.snapshot(), buffers.stderr.snapshot()),
            },
          ],
        });
      };
      const { handle, sandboxed } = await startCommand(run, background, {
        command: args.command,
        buffers,
        unsandboxed,
        timeoutMs,
        signal: ctx.signal,
        onData: () => {
          if (pendingUpdate !== undefined) return;
          const wait = lastUpdate + updateIntervalMs - Date.now();
          if (wait <= 0) sendUpdate();
          else pendingUpdate = setTimeout(sendUpdate, wait);
        },
      });
      const outcome = await handle.done;
      if (pendingUpdate !== undefined) clearTimeout(pendingUpdate);
      if (outcome.spawnError !== undefined && outcome.exitCode === null) {
        throw new ToolError(`Could not start ${settings.shell}: ${outcome.spawnError.message}`, {
          cause: outcome.spawnError,
        });
      }
      const stdout = buffers.stdout.snapshot();
      const stderr = buffers.stderr.snapshot();
      const details = detailsOf(outcome, stdout, stderr, Date.now() - started);
      details.sandboxed = sandboxed;
      if (outcome.aborted && !outcome.timedOut) {
        throw ToolError.cancelled('bash', 'the command was aborted and its process group killed');
      }
      return finishedResult({
        outcome,
        stdout,
        stderr,
        details,
        timeoutMs,
        sandboxed,
        sandbox: run.sandbox,
      });
    },
  });
}
