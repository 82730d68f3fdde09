// `workspaceExecutables: false` (a folder the user has not trusted): nothing the workspace holds
// is found as a server or handed to one as its TypeScript — its node_modules/.bin, its
// node_modules/typescript, a relative PATH entry, an absolute one inside the workspace.
import { chownSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findServerExecutable, findTsserver, typescriptServer } from './language-servers.js';

let dir: string;
let workspace: string;
let outside: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'lsp-workspace-executables-'));
  workspace = path.join(dir, 'repo');
  outside = path.join(dir, 'user-bin');
  await mkdir(outside, { recursive: true });
  for (const folder of ['node_modules/.bin', 'bin', '..bin', 'node_modules/typescript/lib'])
    await mkdir(path.join(workspace, folder), { recursive: true });
  await writeFile(path.join(workspace, 'node_modules/typescript/lib/tsserver.js'), '');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function executable(file: string): Promise<string> {
  await writeFile(file, '#!/bin/sh\n');
  await chmod(file, 0o755);
  return file;
}

const config = { command: 'typescript-language-server' };

describe('findServerExecutable with workspaceExecutables: false', () => {
  it.each([
    ['node_modules/.bin', (): string => '', 'node_modules/.bin'],
    [
      'an absolute PATH entry inside the workspace',
      (): string => path.join(workspace, 'bin'),
      'bin',
    ],
    // A name that starts with two dots is still inside (it was taken for `../`).
    [
      'an absolute PATH entry in a workspace folder named ..bin',
      (): string => path.join(workspace, '..bin'),
      '..bin',
    ],
    ['a relative PATH entry', (): string => 'bin', 'bin'],
    ['PATH holding .', (): string => '.', ''],
  ])('skips %s', async (_label, pathEntry, folder) => {
    await executable(path.join(workspace, folder, config.command));
    const previous = process.cwd();
    // A relative entry is looked up from the process's working directory: the workspace.
    process.chdir(workspace);
    try {
      const options = { root: workspace, pathVariable: `${pathEntry()}:${outside}` };
      expect(await findServerExecutable(config, options)).toBe(
        path.join(
          pathEntry() === '' ? path.join(workspace, 'node_modules/.bin') : pathEntry(),
          config.command,
        ),
      );
      expect(
        await findServerExecutable(config, { ...options, workspaceExecutables: false }),
      ).toBeUndefined();
      // The user's own server, outside the workspace, is found.
      const own = await executable(path.join(outside, config.command));
      expect(await findServerExecutable(config, { ...options, workspaceExecutables: false })).toBe(
        own,
      );
    } finally {
      process.chdir(previous);
    }
  });
});

describe('the TypeScript handed to typescript-language-server', () => {
  it("is never the workspace's own when workspaceExecutables is false", async () => {
    const server = await executable(path.join(outside, config.command));
    const context = { executable: server, root: workspace };
    expect(await findTsserver(context)).toBe(
      path.join(workspace, 'node_modules/typescript/lib/tsserver.js'),
    );
    expect(await findTsserver({ ...context, workspaceExecutables: false })).toBeUndefined();
    // Told no path, the server would take the workspace's: it is not started.
    await expect(
      typescriptServer.initializationOptions?.({ ...context, workspaceExecutables: false }),
    ).rejects.toThrow(/has no TypeScript installed beside it/);
  });

  it('is the one installed beside the server', async () => {
    const prefix = path.join(outside, 'lib');
    await mkdir(path.join(prefix, 'node_modules/.bin'), { recursive: true });
    await mkdir(path.join(prefix, 'node_modules/typescript/lib'), { recursive: true });
    await writeFile(path.join(prefix, 'node_modules/typescript/lib/tsserver.js'), '');
    const server = await executable(path.join(prefix, 'node_modules/.bin', config.command));
    expect(
      await findTsserver({ executable: server, root: workspace, workspaceExecutables: false }),
    ).toBe(path.join(prefix, 'node_modules/typescript/lib/tsserver.js'));
  });
});

describe('a node_modules/.bin above the workspace that another user owns', () => {
  it.each([
    [
      'the executable',
      (shared: string) => [path.join(shared, 'node_modules/.bin', config.command)],
    ],
    ['its folder', (shared: string) => [path.join(shared, 'node_modules/.bin')]],
    ['the shared folder holding node_modules', (shared: string) => [shared]],
  ])('is passed over when %s is theirs (as root; vacuous otherwise)', async (_label, owned) => {
    if (process.getuid?.() !== 0) return expect(process.getuid?.()).not.toBe(0);
    const shared = path.join(dir, 'shared');
    const inside = path.join(shared, 'mine');
    await mkdir(path.join(shared, 'node_modules/.bin'), { recursive: true });
    await mkdir(inside);
    const planted = await executable(path.join(shared, 'node_modules/.bin', config.command));
    const options = { root: inside, pathVariable: outside };
    // The user's own (here root's): used.
    expect(await findServerExecutable(config, options)).toBe(planted);
    for (const entry of owned(shared)) chownSync(entry, 65534, 65534);
    expect(await findServerExecutable(config, options)).toBeUndefined();
    // In the workspace itself it is the user's folder, whoever owns it.
    expect(await findServerExecutable(config, { ...options, root: shared })).toBe(planted);
  });
});
