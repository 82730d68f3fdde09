// Test support: a repository whose `.agent/settings.json` is trusted with `agent trust`, then
// `-p` sessions in it — for the tests of what a `git pull` changing a file a trusted hook loads
// makes the next session do (it must ask again, not run the new code).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { cleanEnv, runCli, tempDir, writeScript } from './test-support.js';

/** Writes `files` (relative names) under `root`, making their folders. */
export async function putFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, name)), { recursive: true });
    await writeFile(join(root, name), text);
  }
}

/**
 * A git repository (`workspace`, in the test's folder `dir`) with `settings` and `files` (given
 * `dir`), trusted as `uid`; `run` is one `-p` session there as `uid`. `env`: more of the CLI's
 * environment, given `dir`.
 */
export async function trustedRepository(options: {
  settings: unknown;
  files: (dir: string) => Record<string, string>;
  uid: number | undefined;
  cleanups: (() => Promise<void>)[];
  env?: (dir: string) => Record<string, string>;
}) {
  const { uid } = options;
  const scratch = await tempDir('agent-trusted-pull-');
  options.cleanups.push(scratch.dispose);
  const dir = scratch.path;
  const home = join(dir, 'home');
  const workspace = join(dir, 'repo');
  await mkdir(join(workspace, '.agent'), { recursive: true });
  await mkdir(home);
  execFileSync('git', ['init', '-q', workspace]);
  await putFiles(workspace, options.files(dir));
  await writeFile(join(workspace, '.agent', 'settings.json'), JSON.stringify(options.settings));
  const script = await writeScript(dir, [{ text: 'done' }]);
  if (uid !== undefined) execFileSync('chown', ['-R', `${uid}:${uid}`, dir]);
  // Another user's CLI cannot use this one's home.
  const env = cleanEnv({
    AGENT_HOME: home,
    ...(uid === undefined ? {} : { HOME: home }),
    ...options.env?.(dir),
  });
  const trust = await runCli(['trust', '--cwd', workspace], { env, uid });
  expect(trust.code, trust.stderr).toBe(0);
  const run = () => runCli(['-p', 'go', '--scripted', script, '--cwd', workspace], { env, uid });
  return { dir, workspace, run };
}

/**
 * The first session runs the trusted Stop hook `command` (it creates `<dir>/first`: the control,
 * outside the sandbox); then a pull rewrites `changed` with `pulled` (which would create
 * `<dir>/second`), and the next session leaves the hook out, names it, and runs none of it.
 */
export async function expectPullAsksAgain(
  repository: Awaited<ReturnType<typeof trustedRepository>>,
  command: string,
  changed: string,
  pulled: string,
): Promise<void> {
  const { dir, workspace, run } = repository;
  const first = await run();
  expect(first.code, first.stderr).toBe(0);
  expect(existsSync(join(dir, 'first')), first.stderr).toBe(true);
  // What a pull does: the loaded file changed, the settings as trusted.
  await writeFile(join(workspace, changed), pulled);
  const again = await run();
  expect(again.code, again.stderr).toBe(0);
  expect(again.stderr).toContain('changed since it was trusted');
  expect(again.stderr).toContain(`changed hook Stop runs: ${command}`);
  expect(existsSync(join(dir, 'second')), 'the pulled code ran unasked').toBe(false);
}
