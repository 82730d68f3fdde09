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

/** The diff a write_file or edit_file call would make, clipped as the transcript shows it ('' when unknown). */
export function proposedDiff(cwd: string, toolName: string, args: unknown): string {
  const change = proposedChange(cwd, toolName, args);
  return change === undefined ? '' : unifiedDiff(change.path, change.before, change.after);
}

/** What a file tool's call would change: its path as given, the text before and after. */
function proposedChange(
  cwd: string,
  toolName: string,
  args: unknown,
): { path: string; before: string; after: string } | undefined {
  if (!isFileChangeTool(toolName)) return undefined;
  const path = changedPath(cwd, args);
  if (path === undefined) return undefined;
  const before = readText(path);
  if (before === undefined) return undefined;
  const a = record(args);
  let after: string;
  if (toolName === 'write_file') {
    if (typeof a.content !== 'string') return undefined;
    after = a.content;
  } else {
    if (typeof a.old_string !== 'string' || typeof a.new_string !== 'string' || a.old_string === '')
      return undefined;
    if (!before.includes(a.old_string)) return undefined;
    after =
      a.replace_all === true
        ? before.split(a.old_string).join(a.new_string)
        : before.replace(a.old_string, () => a.new_string as string);
  }
  return { path: String(a.path), before, after };
}

/**
 * Most diff lines an approval shows; a longer change is not asked about (the model can make it in
 * parts). The question showed 60 lines and `… N more diff lines`, or for a change too different
 * to diff (a new file of over 1,000 lines) or a file it does not read (over 1 MiB) no content at
 * all: what the user approved was not on screen.
 */
export const maxApprovalDiffLines = 2000;

/** What an approval shows of a file tool's change. */
export type ApprovalDiff =
  | { kind: 'none' }
  | { kind: 'shown'; text: string }
  | { kind: 'too-long'; lines: number };

/** `text`'s lines, each with `mark` in front. */
function marked(text: string, mark: '+' | '-'): string[] {
  if (text === '') return [];
  return (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n').map((line) => mark + line);
}

/**
 * The whole change a write_file or edit_file call would make, for its approval: the unified
 * diff; where there is none to make (too different, or the file is not read) the text written —
 * the new content, or edit_file's old and new strings — as `-`/`+` lines.
 */
export function approvalDiff(cwd: string, toolName: string, args: unknown): ApprovalDiff {
  if (!isFileChangeTool(toolName)) return { kind: 'none' };
  const a = record(args);
  const change = proposedChange(cwd, toolName, args);
  let lines: string[];
  if (change !== undefined) {
    if (change.before === change.after) return { kind: 'none' };
    const patch = createTwoFilesPatch(
      change.path,
      change.path,
      change.before,
      change.after,
      '',
      '',
      {
        context: 3,
        maxEditLength: maxEditLines,
      },
    );
    lines =
      patch === undefined
        ? [
            `(too different for a diff: the whole text written, ${lineCount(change.after)} lines)`,
            ...marked(change.after, '+'),
          ]
        : patch
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
  } else if (toolName === 'write_file' && typeof a.content === 'string') {
    lines = [
      '(the file is not read for a diff: the whole text written)',
      ...marked(a.content, '+'),
    ];
  } else if (typeof a.old_string === 'string' && typeof a.new_string === 'string') {
    lines = [
      '(the file is not read for a diff: the text replaced and its replacement)',
      ...marked(a.old_string, '-'),
      ...marked(a.new_string, '+'),
    ];
  } else return { kind: 'none' };
  if (lines.length > maxApprovalDiffLines) return { kind: 'too-long', lines: lines.length };
  return { kind: 'shown', text: lines.join('\n') };
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
