// After a failed `turbo run … test`, the lines that say what failed are far up the output
// (turbo prints each task's log when it ends; a failing suite early in the run is followed by
// minutes of passing ones), and a CI view that keeps only the tail shows "tools-lsp#test exited
// (1)" and nothing more. This prints, last, each failed task's own failure lines from the logs
// turbo keeps (`<package>/.turbo/turbo-<task>.log`). Plain JavaScript: run.mjs imports it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const workspaceFolders = ['apps', 'packages', 'tooling', 'examples'];
const maxLinesPerTask = 80;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the escapes are what is removed.
const ansi = /\x1b\[[0-9;?]*[A-Za-z]/g;

/**
 * The digest lines for the task logs written since `sinceMs` that end in a failure (pnpm's
 * `ELIFECYCLE` line), each under a header naming the log; empty when none failed.
 */
export function failureDigest(root, sinceMs) {
  const lines = [];
  for (const log of taskLogs(root)) {
    let stat;
    try {
      stat = statSync(log);
    } catch {
      continue;
    }
    if (!stat.isFile() || stat.mtimeMs < sinceMs) continue;
    const text = readFileSync(log, 'utf8').replace(ansi, '');
    const all = text.split('\n');
    if (!all.slice(-8).some((line) => /ELIFECYCLE|Command failed with exit code/.test(line)))
      continue;
    lines.push(`── ${log.slice(root.length + 1)} ──`, ...failureLines(all));
  }
  return lines;
}

/** vitest's "Failed Tests" section when there is one (up to its summary), else the log's tail. */
function failureLines(all) {
  const start = all.findIndex((line) => /⎯ Failed Tests? \d+ ⎯|⎯ Unhandled Errors? ⎯/.test(line));
  if (start === -1) return all.filter((line) => line.trim() !== '').slice(-30);
  let end = all.findIndex((line, index) => index > start && /^\s*Test Files\s/.test(line));
  if (end === -1) end = all.length;
  const section = all.slice(start, end).filter((line) => line.trim() !== '');
  if (section.length <= maxLinesPerTask) return section;
  return [
    ...section.slice(0, maxLinesPerTask),
    `… ${section.length - maxLinesPerTask} more lines in the log`,
  ];
}

function taskLogs(root) {
  // The root's own tasks (lint), each workspace package's, and bench (a package at the root).
  const directories = [root, join(root, 'bench')];
  for (const folder of workspaceFolders) {
    const parent = join(root, folder);
    if (existsSync(parent))
      for (const name of readdirSync(parent)) directories.push(join(parent, name));
  }
  const logs = [];
  for (const directory of directories) {
    const turbo = join(directory, '.turbo');
    if (!existsSync(turbo)) continue;
    for (const file of readdirSync(turbo))
      if (/^turbo-.+\.log$/.test(file)) logs.push(join(turbo, file));
  }
  return logs;
}
