// With `.` or an empty entry in PATH (`PATH=:$PATH`, `a::b`), programs the CLI starts by name were
// the repository's own files of those names: its `bwrap` ran at start, before any trust and
// outside any sandbox (it is the sandbox), its `rg` on a read-only search nobody was asked about,
// its `ls` for the model's `ls`. Each planted program here only appends to a canary outside the
// repository and fails.
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';
import { absolutePathEntries } from './absolute-path.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const planted = ['bwrap', 'rg', 'ls', 'cat', 'python3', 'sh', 'bash', 'env'];
/** Where the system's programs are (with node's folder first, for the CLI itself). */
const system = [dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(delimiter);

describe('absolutePathEntries', () => {
  it.each([
    ['.', ['.']],
    ['', ['']],
    ['bin', ['bin']],
    ['./node_modules/.bin', ['./node_modules/.bin']],
  ])('drops %j wherever it stands', (entry, dropped) => {
    for (const path of [`${entry}:/usr/bin`, `/usr/bin:${entry}`, `/usr/bin:${entry}:/bin`])
      expect(absolutePathEntries(path.replaceAll(':', delimiter))).toEqual({
        path: path
          .split(':')
          .filter((part) => part.startsWith('/'))
          .join(delimiter),
        dropped,
      });
  });
});

describe('a PATH entry in the home folder', () => {
  it('~/bin is kept, made absolute (bash expands it); ~user/bin is not', () => {
    expect(
      absolutePathEntries(['~/bin', '/usr/bin', '~', '~other/bin'].join(delimiter), '/home/me'),
    ).toEqual({
      path: ['/home/me/bin', '/usr/bin', '/home/me'].join(delimiter),
      dropped: ['~other/bin'],
    });
  });
});

describe("programs started by name are never the folder's own", () => {
  it.each([
    ['. first', `.${delimiter}${system}`],
    ['an empty entry first (PATH=:$PATH)', `${delimiter}${system}`],
    ['an empty entry between two', system.replace(delimiter, `${delimiter}${delimiter}`)],
    ['a relative folder', `tools${delimiter}${system}`],
  ])('%s', async (_label, path) => {
    const dir = await tempDir('agent-cli-path-');
    cleanups.push(dir.dispose);
    const repo = join(dir.path, 'repo');
    const canary = join(dir.path, 'CANARY');
    await mkdir(join(repo, '.git'), { recursive: true });
    await mkdir(join(repo, 'tools'));
    for (const name of planted)
      for (const folder of [repo, join(repo, 'tools')]) {
        await writeFile(
          join(folder, name),
          `#!/bin/sh\necho "${name} $*" >> '${canary}'\nexit 1\n`,
        );
        await chmod(join(folder, name), 0o755);
      }
    const script = await writeScript(dir.path, [
      { toolCalls: [{ name: 'search', arguments: { pattern: 'CANARY' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'ls; cat /dev/null' } }] },
      { text: 'done' },
    ]);
    const run = await runCli(['-p', 'look', '--scripted', script, '--allow', 'bash'], {
      cwd: repo,
      env: cleanEnv({ AGENT_HOME: join(dir.path, 'home'), PATH: path }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(canary) ? readFileSync(canary, 'utf8') : '').toBe('');
    expect(run.stderr).toContain('agent: PATH entries left out:');
  });
});
