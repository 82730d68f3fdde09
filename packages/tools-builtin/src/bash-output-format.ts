// What a bash run reports: its details (for the host, never sent to the model) and the text the
// model sees, shared by bash and bash_output.
import type { Sandbox } from '@agent/sandbox';
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

export function formatStreams(stdout: OutputSnapshot, stderr: OutputSnapshot): string {
  const parts: string[] = [];
  if (stdout.text !== '') parts.push(stdout.text.replace(/\n$/, ''));
  if (stderr.text !== '') parts.push(`[stderr]\n${stderr.text.replace(/\n$/, '')}`);
  return parts.join('\n');
}

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
