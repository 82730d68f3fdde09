// `--resume <start of an id>`, as one shortens a git hash: the kept session it names alone is
// resumed; before, "not a session id" and a second try with all 36 characters. Two ids that start
// the same are both named, and nothing is resumed.
import { copyFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function folder() {
  const dir = await tempDir('agent-resume-short-id-');
  cleanups.push(dir.dispose);
  const env = cleanEnv({ AGENT_HOME: join(dir.path, 'home') });
  const script = await writeScript(dir.path, [{ text: 'answered' }]);
  const run = (...args: string[]) =>
    runCli(['--scripted', script, '--cwd', dir.path, ...args], { env });
  const sessionsFolder = async () => {
    const root = join(dir.path, 'home', 'sessions');
    const [only = ''] = await readdir(root);
    return join(root, only);
  };
  return { run, sessionsFolder };
}

describe('--resume with the start of a session id', () => {
  it('resumes the one kept session it names', async () => {
    const { run, sessionsFolder } = await folder();
    const first = await run('-p', 'first-prompt', '--output-format', 'json');
    const { sessionId } = JSON.parse(first.stdout) as { sessionId: string };
    await run('-p', 'another-session');
    const resumed = await run('--resume', sessionId.slice(0, 8), '-p', 'second-prompt');
    expect(resumed.stderr).not.toContain('not a session id');
    expect(resumed.code).toBe(0);
    const folderPath = await sessionsFolder();
    const texts = await Promise.all(
      (await readdir(folderPath)).map((name) => readFile(join(folderPath, name), 'utf8')),
    );
    expect(
      texts.some(
        (text) =>
          text.includes(sessionId) &&
          text.includes('first-prompt') &&
          text.includes('second-prompt'),
      ),
    ).toBe(true);
  }, 120_000);

  it('two ids starting the same: both named, nothing resumed', async () => {
    const { run, sessionsFolder } = await folder();
    expect((await run('-p', 'first-prompt')).code).toBe(0);
    const folderPath = await sessionsFolder();
    const [kept = ''] = await readdir(folderPath);
    const a = 'abcdef12-0000-4000-8000-000000000001';
    const b = 'abcdef12-1111-4000-8000-000000000002';
    await copyFile(join(folderPath, kept), join(folderPath, `2026-01-01T00-00-00-000Z-${a}.json`));
    await copyFile(join(folderPath, kept), join(folderPath, `2026-01-02T00-00-00-000Z-${b}.json`));
    const resumed = await run('--resume', 'abcdef12', '-p', 'again');
    expect(resumed.code).toBe(1);
    expect(resumed.stderr).toContain(
      '--resume abcdef12: 2 kept sessions have an id that starts so',
    );
    expect(resumed.stderr).toContain(a);
    expect(resumed.stderr).toContain(b);
  }, 120_000);
});
