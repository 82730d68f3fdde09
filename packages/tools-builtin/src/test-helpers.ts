import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as fsPromises from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ToolContext, ToolResult } from '@agent/core';
import { afterAll } from 'vitest';
import type { FileSystemOperations } from './workspace.js';

const tempDirs: string[] = [];
// Every directory made here is removed after the importing file's tests, whatever they did.
afterAll(() => {
  for (const dir of tempDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A temp directory (real path), removed after the test file's tests. Test-only. */
export function makeTempDir(prefix = 'tools-builtin-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  tempDirs.push(dir);
  return dir;
}

/** A ToolContext for calling `execute` directly; collects updates. Test-only. */
export function testContext(
  options: { signal?: AbortSignal; toolName?: string } = {},
): ToolContext & { updates: ToolResult[] } {
  const updates: ToolResult[] = [];
  return {
    toolCallId: 'call_test',
    toolName: options.toolName ?? 'test',
    signal: options.signal ?? new AbortController().signal,
    onUpdate: (partial) => updates.push(partial),
    onProgress: () => {},
    updates,
  };
}

/** The text of a result's text parts. Test-only. */
export function resultText(result: ToolResult): string {
  return result.content
    .map((part) => (part.type === 'text' ? part.text : `[${part.type}]`))
    .join('\n');
}

/** Processes (not zombies) whose process group is `pgid`, from /proc. Test-only, Linux. */
export function liveGroupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const state = procState(Number(entry));
    if (state !== undefined && state.pgrp === pgid && state.state !== 'Z')
      members.push(Number(entry));
  }
  return members;
}

/** True when `pid` exists and is not a zombie. Test-only, Linux. */
export function isAlive(pid: number): boolean {
  const state = procState(pid);
  return state !== undefined && state.state !== 'Z';
}

function procState(pid: number): { state: string; pgrp: number } | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0] ?? '', pgrp: Number(rest[2]) };
  } catch {
    return undefined;
  }
}

/** Puts something at `file` the way a hostile repository (or a sandboxed command) can. Test-only. */
export type Plant = (file: string) => void;

/** What stands where a small regular file is expected: a FIFO, a link to /dev/zero, a folder, a sparse 2 GB file. Test-only. */
export const hostilePlants: readonly [string, Plant][] = [
  ['a FIFO', (file) => execFileSync('mkfifo', [file])],
  ['a link to /dev/zero', (file) => fs.symlinkSync('/dev/zero', file)],
  ['a folder', (file) => fs.mkdirSync(file)],
  [
    'a sparse file of 2 GB',
    (file) => {
      fs.writeFileSync(file, '');
      fs.truncateSync(file, 2 * 1024 ** 3);
    },
  ],
];

/**
 * Node's fs, except that the first `open` of a path ending in `suffix` runs `race` first: an
 * attacker's swap between a file tool's check and its open. Test-only.
 */
export function swapBeforeOpen(suffix: string, race: () => void): FileSystemOperations {
  let raced = false;
  const open = (async (...args: Parameters<typeof fsPromises.open>) => {
    if (!raced && String(args[0]).endsWith(suffix)) {
      raced = true;
      race();
    }
    return fsPromises.open(...args);
  }) as typeof fsPromises.open;
  return { ...fsPromises, open };
}
