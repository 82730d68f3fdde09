// Your hook marked `"sandbox": false` (a notifier) runs outside the sandbox in every folder, one
// you have not trusted too — and it started in that folder: `npx --no notify-done` ran the cloned
// repository's `node_modules/.bin/notify-done` as you, at the first run's end, before you trusted
// anything. In a folder not trusted such a hook now starts in your home. Real CLI, real npx
// (offline), real bubblewrap.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
beforeAll(() => assertBuilt());
beforeEach(skipWithout('bwrap'));

/** A cloned repository that plants `notify-done`, and your notifier hook that runs it by npx. */
async function clonedRepository() {
  const dir = await tempDir('agent-cli-hooks-untrusted-cwd-');
  cleanups.push(dir.dispose);
  const repo = join(dir.path, 'repo');
  const home = join(dir.path, 'home');
  const agentHome = join(home, '.agent');
  const outside = join(dir.path, 'outside');
  await mkdir(join(repo, 'node_modules', '.bin'), { recursive: true });
  await mkdir(agentHome, { recursive: true });
  await mkdir(outside);
  execFileSync('git', ['init', '-q', repo]);
  await writeFile(join(repo, 'package.json'), '{"name":"cloned"}\n');
  await writeFile(
    join(repo, 'node_modules', '.bin', 'notify-done'),
    `#!/bin/sh\ntouch ${JSON.stringify(join(outside, 'escaped'))}\n`,
    { mode: 0o755 },
  );
  const where = join(outside, 'where');
  await writeFile(
    join(agentHome, 'settings.json'),
    JSON.stringify({
      hooks: {
        Stop: [
          {
            hooks: [
              { type: 'command', command: 'npx --no notify-done', sandbox: false },
              { type: 'command', command: `pwd > ${JSON.stringify(where)}`, sandbox: false },
            ],
          },
        ],
      },
    }),
  );
  const script = await writeScript(dir.path, [{ text: 'done' }]);
  // npx from the toolchain that runs these tests (next to its node); offline, it fails fast.
  const env = cleanEnv({
    AGENT_HOME: agentHome,
    HOME: home,
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
  });
  const run = (...extra: string[]) =>
    runCli(['-p', 'go', '--scripted', script, '--cwd', repo, ...extra], { env });
  return {
    run,
    repo,
    home,
    escaped: () => existsSync(join(outside, 'escaped')),
    where: () => readFileSync(where, 'utf8').trim(),
  };
}

describe('your hook outside the sandbox in a folder you have not trusted', () => {
  it("starts in your home: npx does not run the folder's planted bin", async () => {
    const at = await clonedRepository();
    const run = await at.run();
    expect(at.escaped(), "the folder's node_modules/.bin ran outside the sandbox").toBe(false);
    expect(run.code, run.stderr).toBe(0);
    expect(at.where()).toBe(realpathSync(at.home));
  });

  it('in a trusted folder it starts in the folder, as before', async () => {
    const at = await clonedRepository();
    await at.run('--trust');
    expect(at.where()).toBe(realpathSync(at.repo));
  });
});
