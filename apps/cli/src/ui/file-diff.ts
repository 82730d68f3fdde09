/**
 * Unified diffs of the file tools' changes, for approvals (the change a call would make) and
 * results (the change it made). Made with `diff` (jsdiff), the usual library for this.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { terminalSafe } from '@agent/core';
import { createTwoFilesPatch } from 'diff';

/** Longest diff shown (lines); the rest is counted. */
const maxDiffLines = 60;

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

/** The file's text now ('' when it does not exist or cannot be read). */
export function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** A unified diff of `before` → `after`, without the header lines, clipped; '' when equal. */
export function unifiedDiff(path: string, before: string, after: string): string {
  if (before === after) return '';
  const patch = createTwoFilesPatch(path, path, before, after, undefined, undefined, {
    context: 3,
  });
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

/** The diff a write_file or edit_file call would make, for its approval ('' when unknown). */
export function proposedDiff(cwd: string, toolName: string, args: unknown): string {
  if (!isFileChangeTool(toolName)) return '';
  const path = changedPath(cwd, args);
  if (path === undefined) return '';
  const before = readText(path);
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
