// The program that opens a sign-in page runs outside any sandbox. PATH may name a folder of the
// workspace (an activated `.venv/bin`, the `node_modules/.bin` that `npx` puts first) where a
// sandboxed command could write an `xdg-open` (or the `$BROWSER` named) of its own: the one that
// runs is found outside the workspace. Each program here notes its run in `ran/`, watched.
import { watch } from 'node:fs';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../testing/test-support.js';
import { openInBrowser } from './mcp-interactions.js';

const cleanups: (() => Promise<void>)[] = [];
const originalPath = process.env.PATH;
afterEach(async () => {
  process.env.PATH = originalPath;
  delete process.env.SIGN_IN_TEST_API_KEY;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function program(folder: string, name: string, ran: string, label: string): Promise<void> {
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, name), `#!/bin/sh\n: > '${join(ran, label)}'\n`);
  await chmod(join(folder, name), 0o755);
}

describe.runIf(process.platform === 'linux')('the program opening a sign-in page', () => {
  it.each([
    ['xdg-open', {}],
    ['$BROWSER by name', { BROWSER: 'my-browser' }],
  ])('%s is not the workspace’s own, first on PATH', async (_label, extra) => {
    const dir = await tempDir('agent-cli-browser-');
    cleanups.push(dir.dispose);
    const workspace = join(dir.path, 'workspace');
    const ran = join(dir.path, 'ran');
    await mkdir(ran);
    const name = 'BROWSER' in extra ? extra.BROWSER : 'xdg-open';
    await program(join(workspace, '.venv', 'bin'), name, ran, 'workspace');
    await program(join(dir.path, 'system-bin'), name, ran, 'system');
    const env = {
      PATH: [
        join(workspace, '.venv', 'bin'),
        join(dir.path, 'system-bin'),
        '/usr/bin',
        '/bin',
      ].join(delimiter),
      ...extra,
    };
    // This process's PATH too: spawn looks a bare name up there.
    process.env.PATH = env.PATH;
    const started = new Promise<void>((resolve) => {
      const watcher = watch(ran, () => {
        watcher.close();
        resolve();
      });
    });
    expect(openInBrowser('https://example.com/sign-in', env, [workspace])).toBe(true);
    await started;
    expect(await readdir(ran)).toEqual(['system']);
  });

  it('gets none of the user’s keys: the browser it starts may run for hours, its environ readable by any process of the user', async () => {
    const dir = await tempDir('agent-cli-browser-env-');
    cleanups.push(dir.dispose);
    const environ = join(dir.path, 'environ');
    const bin = join(dir.path, 'bin');
    await mkdir(bin);
    await writeFile(
      join(bin, 'my-browser'),
      `#!/bin/sh\ncat /proc/$$/environ > '${environ}.part' && mv '${environ}.part' '${environ}'\n`,
    );
    await chmod(join(bin, 'my-browser'), 0o755);
    const key = 'sign-in-key-short';
    process.env.SIGN_IN_TEST_API_KEY = key;
    process.env.PATH = [bin, '/usr/bin', '/bin'].join(delimiter);
    const started = new Promise<void>((resolve) => {
      const watcher = watch(dir.path, (_event, name) => {
        if (name !== 'environ') return;
        watcher.close();
        resolve();
      });
    });
    expect(
      openInBrowser('https://example.com/sign-in', { ...process.env, BROWSER: 'my-browser' }, [
        join(dir.path, 'workspace'),
      ]),
    ).toBe(true);
    await started;
    const text = await readFile(environ, 'utf8');
    expect(text).toContain('BROWSER=my-browser');
    expect(text).not.toContain(key);
  });
});
