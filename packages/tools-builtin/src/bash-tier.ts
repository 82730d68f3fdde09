import { constants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { PermissionTier } from '@agent/core';
import type { SandboxStatus } from '@agent/sandbox';
import { isPathInside } from './path-inside.js';
import { classifyReadOnly } from './read-only-commands.js';
import { gitConfigRefusal } from './read-only-git.js';

/** What decides the tier of one bash call. */
export interface BashTierContext {
  /** The sandbox commands run in. */
  sandbox: Pick<SandboxStatus, 'active' | 'network'>;
  /** The working directory commands start in (the workspace). */
  cwd: string;
  /** The call asked to run outside the sandbox. */
  unsandboxed: boolean;
  /** The commands' `PATH`: the workspace's own `ls` found through it is not `ls` [not looked along]. */
  searchPath?: string | undefined;
}

/** The tier one bash call needs, and why. */
export interface BashTier {
  tier: PermissionTier;
  /** Why it is not `read-only` (for tests and logs). */
  reason?: string;
}

/** The real path of `target`, or of its nearest existing ancestor with the rest appended. */
async function realPathOf(target: string): Promise<string> {
  let existing = target;
  const missing: string[] = [];
  for (;;) {
    try {
      return path.join(await fs.realpath(existing), ...missing.reverse());
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return target;
      missing.push(path.basename(existing));
      existing = parent;
    }
  }
}

/** Why a read outside the sandbox could leave the workspace, or undefined when it stays inside. */
async function confinementRefusal(
  paths: readonly string[],
  cwd: string,
): Promise<string | undefined> {
  const root = await realPathOf(path.resolve(cwd));
  for (const word of paths) {
    if (word === '-' || word === '/dev/stdin') continue;
    const target = await realPathOf(path.resolve(cwd, word));
    if (!isPathInside(root, target)) return `reads ${word}, outside the workspace`;
  }
  return undefined;
}

const expandingWord = /[*?[{~$`]/;
const endlessPlaces = /(^|\/)(dev|proc|sys)(\/|$)/;

/**
 * Why a word read as a path may never end or block (a device such as `/dev/zero`, a FIFO, a
 * file of /proc or /sys), or undefined. Such a read is no workspace read: `cat /dev/zero` in the
 * background spilled a gigabyte a stream, unasked, in read-only and plan mode. A word bash expands
 * into such a place (`/de?/zero`, a glob near the root, `../../dev`) counts too.
 */
async function endlessRead(paths: readonly string[], cwd: string): Promise<string | undefined> {
  for (const word of paths) {
    if (word === '-' || word === '/dev/null' || word === '/dev/stdin') continue;
    if (expandingWord.test(word)) {
      const absoluteGlob =
        /^[/~]/.test(word) && /[*?[{]/.test(word.split('/').slice(0, 3).join('/'));
      if (absoluteGlob || word.includes('..') || endlessPlaces.test(word))
        return `reads ${word}, which may name a device or a FIFO`;
      continue;
    }
    const absolute = path.resolve(cwd, word);
    if (endlessPlaces.test(absolute)) return `reads ${word}, a device or kernel file`;
    const info = await fs.stat(absolute).catch(() => undefined);
    if (info !== undefined && !info.isFile() && !info.isDirectory())
      return `reads ${word}, a device, FIFO or socket`;
  }
  return undefined;
}

// bash runs these itself, whatever PATH holds.
const builtins = new Set(['echo', 'printf', 'pwd', 'test', '[', '[[', 'true', 'false', 'type']);

/**
 * The first command of the line that `PATH` would find inside the workspace (or through a
 * relative entry, which is resolved against it): a workspace's own `node_modules/.bin/ls` must
 * not pass for `ls`. Undefined when every command is a builtin or found outside.
 */
async function shadowedCommand(
  names: readonly string[],
  searchPath: string | undefined,
  cwd: string,
): Promise<string | undefined> {
  if (searchPath === undefined) return undefined;
  const root = await realPathOf(path.resolve(cwd));
  for (const name of names) {
    if (builtins.has(name)) continue;
    for (const entry of searchPath.split(':')) {
      // An empty entry is the current directory, as is any relative one.
      const found = path.join(path.resolve(cwd, entry === '' ? '.' : entry), name);
      const runnable = await fs.access(found, constants.X_OK).then(
        () => true,
        () => false,
      );
      if (!runnable) continue;
      if (!path.isAbsolute(entry) || isPathInside(root, await realPathOf(found))) {
        return `${name} (found as ${found})`;
      }
      break;
    }
  }
  return undefined;
}

/**
 * The tier a bash call needs (DESIGN §4: rules decide what to ask, the sandbox what can happen):
 *
 * - `read-only` — every command is on the built-in read-only list with options that only read
 *   (`classifyReadOnly`). Inside the sandbox that is enough (it hides secrets and keeps writes in
 *   the workspace), except that git also needs a repository configuration that runs nothing.
 *   Without the sandbox the reads must stay in the workspace by real path: no git, no word bash
 *   expands, every path inside `cwd`.
 * - `workspace-write` — the call runs in an active sandbox with the network off: whatever it
 *   runs can write only the workspace roots and a private /tmp.
 * - `full-access` — anything else (no sandbox, a network, or `dangerouslyDisableSandbox`).
 *
 * Never throws; anything it cannot establish gives the higher tier.
 */
export async function bashCallTier(command: string, context: BashTierContext): Promise<BashTier> {
  const { sandbox, unsandboxed } = context;
  const contained = sandbox.active && !unsandboxed;
  const fallback: PermissionTier =
    contained && sandbox.network === 'off' ? 'workspace-write' : 'full-access';
  const verdict = classifyReadOnly(command);
  if (!verdict.readOnly) return { tier: fallback, reason: verdict.reason };
  try {
    const endless = await endlessRead(verdict.paths, context.cwd);
    if (endless !== undefined) return { tier: fallback, reason: endless };
    const shadowed = await shadowedCommand(verdict.commands, context.searchPath, context.cwd);
    if (shadowed !== undefined)
      return { tier: fallback, reason: `PATH runs the workspace's own ${shadowed}` };
    if (contained) {
      const refused = verdict.git ? await gitConfigRefusal(context.cwd) : undefined;
      return refused === undefined ? { tier: 'read-only' } : { tier: fallback, reason: refused };
    }
    if (verdict.git) return { tier: fallback, reason: 'git outside the sandbox' };
    if (verdict.expands)
      return { tier: fallback, reason: 'a word bash expands, outside the sandbox' };
    const outside = await confinementRefusal(verdict.paths, context.cwd);
    return outside === undefined ? { tier: 'read-only' } : { tier: fallback, reason: outside };
  } catch (error) {
    return { tier: fallback, reason: `could not be checked: ${String(error)}` };
  }
}
