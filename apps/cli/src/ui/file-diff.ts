/**
 * Unified diffs of the file tools' changes, for approvals (the change a call would make) and
 * results (the change it made). Made with `diff` (jsdiff), the usual library for this.
 */
import { isAbsolute, join } from 'node:path';
import { terminalSafe } from '@agent/core';
import { readRegularFileSync } from '@agent/core/regular-file';
import { createTwoFilesPatch } from 'diff';

/** Longest diff shown (lines); the rest is counted. */
const maxDiffLines = 60;
/** Largest file read for a diff (bytes): the file is read on the loop, before and after the call. */
export const maxDiffFileBytes = 1024 * 1024;
/**
 * Most lines added plus removed that a diff is worked out for: Myers' algorithm costs the file's
 * length times this on the loop (a 250 kB file rewritten whole took 5.8 s, 1 MB about 90 s,
 * with Ctrl-C unanswered), so a larger change is summarised instead.
 */
const maxEditLines = 1000;

/** The file tools whose changes are shown as diffs. */
export function isFileChangeTool(toolName: string): boolean {
  return toolName === 'write_file' || toolName === 'edit_file';
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}

/** The path a file tool's arguments name, resolved in `cwd`. */
export function changedPath(cwd: string, args: unknown): string | undefined {
  const path = record(args).path;
  if (typeof path !== 'string' || path === '') return undefined;
  return isAbsolute(path) ? path : join(cwd, path);
}

/**
 * The file's text now: '' when it does not exist, undefined when it is not read — not a regular
 * file (a FIFO the model named would block the loop for ever in open, a device never ends), over
 * {@link maxDiffFileBytes}, or unreadable. The path is the model's: opened without blocking and
 * judged on the opened file.
 */
export function readText(path: string): string | undefined {
  const outcome = readRegularFileSync(path, { maxBytes: maxDiffFileBytes });
  if (outcome.kind === 'missing' && outcome.code === 'ENOENT') return '';
  return outcome.kind === 'read' ? outcome.bytes.toString('utf8') : undefined;
}

/** A unified diff of `before` → `after`, without the header lines, clipped; '' when equal. */
export function unifiedDiff(path: string, before: string, after: string): string {
  if (before === after) return '';
  const patch = createTwoFilesPatch(path, path, before, after, undefined, undefined, {
    context: 3,
    maxEditLength: maxEditLines,
  });
  if (patch === undefined)
    return `… too different to show as a diff (${lineCount(before)} lines before, ${lineCount(after)} after)`;
  const lines = patch
    .split('\n')
    .filter(
      (line) =>
        !line.startsWith('===') &&
        !line.startsWith('--- ') &&
        !line.startsWith('+++ ') &&
        !line.startsWith('Index:') &&
        !line.startsWith('\\ No newline'),
    )
    .filter((line, i, all) => line !== '' || i < all.length - 1);
  if (lines.length <= maxDiffLines) return lines.join('\n');
  return [...lines.slice(0, maxDiffLines), `… ${lines.length - maxDiffLines} more diff lines`].join(
    '\n',
  );
}

function lineCount(text: string): number {
  if (text === '') return 0;
  let count = 1;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1))
    count += 1;
  return text.endsWith('\n') ? count - 1 : count;
}

/** The diff a write_file or edit_file call would make, for its approval ('' when unknown). */
export function proposedDiff(cwd: string, toolName: string, args: unknown): string {
  if (!isFileChangeTool(toolName)) return '';
  const path = changedPath(cwd, args);
  if (path === undefined) return '';
  const before = readText(path);
  if (before === undefined) return '';
  const a = record(args);
  let after: string;
  if (toolName === 'write_file') {
    if (typeof a.content !== 'string') return '';
    after = a.content;
  } else {
    if (typeof a.old_string !== 'string' || typeof a.new_string !== 'string' || a.old_string === '')
      return '';
    if (!before.includes(a.old_string)) return '';
    after =
      a.replace_all === true
        ? before.split(a.old_string).join(a.new_string)
        : before.replace(a.old_string, () => a.new_string as string);
  }
  return unifiedDiff(String(a.path), before, after);
}

/** Colours a diff's lines (+ green, - red, @@ cyan) when `colour` is on. */
export function paintDiff(diff: string, colour: boolean, indent = '    '): string {
  return (
    diff
      .split('\n')
      // A file's lines are the repository's or the model's: shown, never acted on by the terminal.
      .map((line) => terminalSafe(line, { singleLine: true }))
      .map((line) => {
        if (!colour) return `${indent}${line}`;
        if (line.startsWith('+')) return `${indent}\u001b[32m${line}\u001b[39m`;
        if (line.startsWith('-')) return `${indent}\u001b[31m${line}\u001b[39m`;
        if (line.startsWith('@@')) return `${indent}\u001b[36m${line}\u001b[39m`;
        return `${indent}${line}`;
      })
      .join('\n')
  );
}
