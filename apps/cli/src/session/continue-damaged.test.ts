// --continue when the folder's newest session file cannot be read (cut off by a full disk, damaged
// by a sync tool): before, it said only that the file was unreadable, and every --continue stopped
// there — nothing said the sessions before it were there, nor how to reach one without a terminal
// for the picker. Now the error names the one before it as the --resume to type, and what to do
// when it was the only one; the command it gives works.
import { readdir, readFile, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function folder() {
  const dir = await tempDir('agent-continue-damaged-');
  cleanups.push(dir.dispose);
  const env = cleanEnv({ AGENT_HOME: join(dir.path, 'home') });
  const script = await writeScript(dir.path, [{ text: 'answered' }]);
  const run = (...args: string[]) =>
    runCli(['--scripted', script, '--cwd', dir.path, ...args], { env });
  /** The session files of the folder, oldest first (their names start with the time). */
  const sessions = async () => {
    const root = join(dir.path, 'home', 'sessions');
    const [only] = await readdir(root);
    const names = (await readdir(join(root, only ?? ''))).sort();
    return names.map((name) => join(root, only ?? '', name));
  };
  return { run, sessions };
}

describe('--continue with a damaged newest session', () => {
  it('names the one before it; the --resume it gives goes on with that conversation', async () => {
    const { run, sessions } = await folder();
    expect((await run('-p', 'first-prompt')).code).toBe(0);
    expect((await run('-p', 'second-prompt')).code).toBe(0);
    const [older, newest] = await sessions();
    if (older === undefined || newest === undefined) throw new Error('two sessions expected');
    await truncate(newest, 100);
    const continued = await run('--continue', '-p', 'third-prompt');
    expect(continued.code).toBe(1);
    expect(continued.stderr).toContain(`agent: Cannot read the conversation ${newest}`);
    expect(continued.stderr).toContain(
      `--continue takes this folder's newest session, and that one cannot be read: to go on with the one before it: agent --resume '${older}'`,
    );
    expect(continued.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    const resumed = await run('--resume', older, '-p', 'third-prompt');
    expect(resumed.code).toBe(0);
    // The conversation went on: a kept session holds the first prompt and the new one.
    const texts = await Promise.all((await sessions()).map((path) => readFile(path, 'utf8')));
    expect(
      texts.some((text) => text.includes('first-prompt') && text.includes('third-prompt')),
    ).toBe(true);
  }, 120_000);

  it('the only one: says to move it away to start afresh', async () => {
    const { run, sessions } = await folder();
    expect((await run('-p', 'first-prompt')).code).toBe(0);
    const [only] = await sessions();
    if (only === undefined) throw new Error('a session expected');
    await truncate(only, 50);
    const continued = await run('--continue', '-p', 'again');
    expect(continued.code).toBe(1);
    expect(continued.stderr).toContain('that one cannot be read: it is the only one kept');
  }, 60_000);
});
