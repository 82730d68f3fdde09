// What a bash run reports: its details (for the host, never sent to the model) and the text the
// model sees, shared by bash and bash_output.
import type { ToolResult } from '@agent/core';
import type { Sandbox } from '@agent/sandbox';
import type { BackgroundTask } from './background-tasks.js';
import type { OutputSnapshot } from './output-buffer.js';
import type { ProcessOutcome } from './process-group.js';

/** `details` of a bash result (never sent to the model). */
export interface BashDetails {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** True when head/tail truncation dropped output (see the spill paths). */
  truncated: boolean;
  timedOut: boolean;
  stdoutBytes: number;
  stderrBytes: number;
  stdoutPath?: string;
  stderrPath?: string;
  /** True when a spill file reached `maxSpillBytes` and holds only the start of its stream. */
  spillCapped?: boolean;
  durationMs: number;
  /** Set in background mode. */
  taskId?: string;
  /** Whether the command ran inside the OS sandbox. */
  sandboxed?: boolean;
  /** The sandbox's explanation when its output shows the sandbox blocked it (also in the text). */
  sandboxBlocked?: string;
  /**
   * Repositories and home startup files that appeared in the writable roots since the previous
   * command (the sandbox's `checkPlanted`): run later by the user's git or shell (also in the text).
   */
  sandboxPlanted?: string[];
}

/**
 * The line a result gets when sandboxed commands made what the user's own programs run later,
 * outside the sandbox (the sandbox's `checkPlanted`), else ''.
 */
export function plantedNote(planted: readonly string[], incomplete?: string): string {
  const made =
    planted.length === 0
      ? ''
      : `\nSandboxed commands made ${planted.join(', ')}: what a repository's hooks and config or a startup file hold runs with the user's next git command in that folder, or next shell, outside the sandbox. Tell the user, so they look before using it; the sandbox keeps it read-only from now on.`;
  // A command can make more directories than the search reads, to hide a repository among them.
  const unread =
    incomplete === undefined
      ? ''
      : `\nThe sandbox could not look through everything sandboxed commands changed (${incomplete}): a repository they made there, with hooks that run on the user's next git command in it, may not be listed. Tell the user to look before running git in folders the commands made.`;
  return made + unread;
}

/**
 * The sandbox's note for a command it stopped, else undefined: by its output (a write refused,
 * the network off, a refused fork…), or by its cgroup's counters — a process killed for memory
 * shows only as "Killed" or exit 137, which no output explains.
 */
export function sandboxNote(
  sandbox: Sandbox,
  output: { stdout: string; stderr: string },
  outcome: Pick<ProcessOutcome, 'limitEvents'>,
): string | undefined {
  const byOutput = sandbox.explainFailure(
    `${withoutNotice(output.stdout)}\n${withoutNotice(output.stderr)}`,
  );
  const byLimits =
    outcome.limitEvents === undefined ? undefined : sandbox.explainLimits(outcome.limitEvents);
  if (byLimits === undefined || byLimits === byOutput) return byOutput;
  return byOutput === undefined ? byLimits : `${byLimits}\n${byOutput}`;
}

/**
 * Output without the truncation notice, whose spill path lies in the per-user directory the
 * sandbox hides: naming it is no sign that the sandbox blocked the command.
 */
export function withoutNotice(text: string): string {
  // The notice starts its line: tried at every `[... ` of a line, the expression rescanned the rest
  // of it each time (quadratic in a command's crafted output).
  return text.replace(/^\[\.\.\. [\d,]+ bytes omitted of [\d,]+; [^\n]* \.\.\.\]/gm, '');
}

/** The text of a run's output: stdout, then stderr under a `[stderr]` line (each without its last newline). */
export function formatStreams(stdout: OutputSnapshot, stderr: OutputSnapshot): string {
  const parts: string[] = [];
  if (stdout.text !== '') parts.push(stdout.text.replace(/\n$/, ''));
  if (stderr.text !== '') parts.push(`[stderr]\n${stderr.text.replace(/\n$/, '')}`);
  return parts.join('\n');
}

/** The `details` of a run that ended (or is still running) after `durationMs` ms. */
export function detailsOf(
  outcome: ProcessOutcome,
  stdout: OutputSnapshot,
  stderr: OutputSnapshot,
  durationMs: number,
): BashDetails {
  const details: BashDetails = {
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    stdout: stdout.text,
    stderr: stderr.text,
    truncated: stdout.truncated || stderr.truncated,
    timedOut: outcome.timedOut,
    stdoutBytes: stdout.totalBytes,
    stderrBytes: stderr.totalBytes,
    durationMs,
  };
  if (stdout.spillPath !== undefined) details.stdoutPath = stdout.spillPath;
  if (stderr.spillPath !== undefined) details.stderrPath = stderr.spillPath;
  if (stdout.spillCapped === true || stderr.spillCapped === true) details.spillCapped = true;
  return details;
}

/** The result of a call that started `task` in the background: its id, for bash_output. */
export function startedResult(task: BackgroundTask): ToolResult<BashDetails> {
  return {
    content: [
      {
        type: 'text',
        text: `Started in background as task ${task.id} (pid ${task.handle.pid}). Read its output or kill it with bash_output { "task_id": "${task.id}" }.`,
      },
    ],
    details: {
      exitCode: null,
      signal: null,
      stdout: '',
      stderr: '',
      truncated: false,
      timedOut: false,
      stdoutBytes: 0,
      stderrBytes: 0,
      durationMs: 0,
      taskId: task.id,
    },
  };
}

/**
 * The result of a foreground command that ended (not aborted): its output, how it ended, and the
 * sandbox's notes — what it blocked, and what sandboxed commands made for the user's programs.
 * A failed command is an `isError` result that still carries its output.
 */
export function finishedResult(run: {
  outcome: ProcessOutcome;
  stdout: OutputSnapshot;
  stderr: OutputSnapshot;
  details: BashDetails;
  timeoutMs: number;
  sandboxed: boolean;
  sandbox: Sandbox;
}): ToolResult<BashDetails> {
  const { outcome, stdout, stderr, details, timeoutMs, sandboxed, sandbox } = run;
  const body = formatStreams(stdout, stderr);
  const status = outcome.timedOut
    ? `Command timed out after ${timeoutMs} ms; its process group was killed.`
    : outcome.lost !== undefined
      ? `The command's sandbox died while it ran, and the command with it: ${outcome.lost}. The next command starts a new sandbox.`
      : `Exit code: ${outcome.exitCode ?? 'unknown'}${outcome.signal ? ` (signal ${outcome.signal})` : ''}`;
  // A failure the sandbox caused says so: not just "Permission denied" or "Read-only file system".
  const blocked = !sandboxed
    ? undefined
    : sandboxNote(sandbox, { stdout: stdout.text, stderr: stderr.text }, outcome);
  // What sandboxed commands made that the user's own programs run later, outside the sandbox
  // (checked after every command, so one the user ran unsandboxed is not taken for theirs).
  const planted = sandbox.status.active ? (sandbox.checkPlanted?.() ?? []) : [];
  const unread = sandbox.status.active ? sandbox.plantedCheckIncomplete?.() : undefined;
  const planting = sandboxed ? plantedNote(planted, unread) : '';
  // A lost sandbox's status says it already.
  const replaced =
    outcome.sandboxReplaced === true && outcome.lost === undefined
      ? '\nThe next command starts in a new sandbox: what commands wrote to /tmp and /dev/shm is gone.'
      : '';
  const text =
    (body === '' ? `${status}\n(no output)` : `${body}\n${status}`) +
    (blocked === undefined ? '' : `\n${blocked}`) +
    replaced +
    planting;
  const result: ToolResult<BashDetails> = { content: [{ type: 'text', text }], details };
  // A failed command is a failed call (marks and `isError` say so); the model still reads
  // its whole output and exit code in the text.
  if (outcome.timedOut || outcome.lost !== undefined || outcome.exitCode !== 0) {
    result.isError = true;
  }
  if (blocked !== undefined) details.sandboxBlocked = blocked;
  if (planting !== '') details.sandboxPlanted = planted;
  return result;
}
