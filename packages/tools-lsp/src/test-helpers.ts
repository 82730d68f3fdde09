import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AnyAgentTool } from '@agent/core';
import type { LanguageServerConfig } from './language-servers.js';
import { LspWorkspace, type LspWorkspaceOptions } from './lsp-workspace.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The fixture projects (not to be changed: tests work on copies). */
export const fixturesDir = path.join(here, '__fixtures__');

/**
 * The test server of `__fixtures__/diagnostics-flood-server` (a real process speaking JSON-RPC
 * over stdio, files `.hx`): it publishes what its FLOOD_* variables ask for, answers the rest.
 */
export const floodServerConfig: LanguageServerConfig = {
  language: 'flood',
  command: process.execPath,
  args: [path.join(fixturesDir, 'diagnostics-flood-server', 'server.mjs')],
  extensions: ['.hx'],
  languageIdOf: () => 'flood',
  installHint: 'the test fixture',
};

/**
 * The test server of `__fixtures__/hostile-server` (files `.hx`): it answers every position with
 * locations in, and renames into, the file its HOSTILE_TARGET variable names.
 */
export const hostileServerConfig: LanguageServerConfig = {
  language: 'hostile',
  command: process.execPath,
  args: [path.join(fixturesDir, 'hostile-server', 'server.mjs')],
  extensions: ['.hx'],
  languageIdOf: () => 'hostile',
  installHint: 'the test fixture',
};

/** The tool called `name` of `tools` (throws when there is none). */
export function toolNamed(tools: readonly AnyAgentTool[], name: string): AnyAgentTool {
  const found = tools.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no tool ${name}`);
  return found;
}

/** The repository's root directory. */
export const repoRoot = path.join(here, '..', '..', '..');

/** This package's `node_modules/.bin`, where the dev-dependency servers are installed. */
export const packageBin = path.join(here, '..', 'node_modules', '.bin');

/** TypeScript 7's `node_modules/.bin` (the private tooling package that installs it apart). */
export const typescriptNativeBin = path.join(
  here,
  '..',
  '..',
  '..',
  'tooling',
  'typescript-native',
  'node_modules',
  '.bin',
);

/** A copy of a fixture project in a fresh temp dir; removed by `Symbol.asyncDispose`. */
export async function copyFixture(name: 'ts-project' | 'py-project'): Promise<{
  dir: string;
  [Symbol.asyncDispose]: () => Promise<void>;
}> {
  const parent = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'agent-lsp-')));
  const dir = path.join(parent, name);
  await fs.cp(path.join(fixturesDir, name), dir, { recursive: true });
  return { dir, [Symbol.asyncDispose]: () => fs.rm(parent, { recursive: true, force: true }) };
}

/** An LspWorkspace over `dir` finding the servers in this package's node_modules/.bin. */
export function testWorkspace(
  dir: string,
  options: Partial<LspWorkspaceOptions> = {},
): LspWorkspace {
  // PATH keeps node and the system tools the .bin shims use, so only this package's servers are found.
  return new LspWorkspace({
    cwd: dir,
    binPaths: [packageBin],
    env: {
      ...process.env,
      PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter),
    },
    ...options,
  });
}

/** Process ids whose process group is `pgid` (Linux, from /proc). */
export async function processesInGroup(pgid: number): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await fs.readFile(`/proc/${entry}/stat`, 'utf8').catch(() => undefined);
    if (stat === undefined) continue;
    // Fields after the command name (which may hold spaces) start after the last ")".
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = fields[0];
    if (Number(fields[2]) === pgid && state !== 'Z') found.push(Number(entry));
  }
  return found;
}
