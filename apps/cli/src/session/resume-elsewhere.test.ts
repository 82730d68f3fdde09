// `--resume <id>` from another folder than the session ran in (the wrong terminal tab, a script
// that cds first): it goes on, but with this folder's files and settings, so that is said. The
// built CLI as a real process, with a scripted model.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('--resume <id> in another folder', () => {
  it('goes on, and says the session ran elsewhere and how to go on there', async () => {
    const scratch = await tempDir('agent-resume-elsewhere-');
    cleanups.push(scratch.dispose);
    const [home, first, second] = ['home', 'project-one', 'project-two'].map((name) =>
      join(scratch.path, name),
    );
    for (const dir of [home, first, second]) await mkdir(dir ?? '');
    const env = cleanEnv({ AGENT_HOME: home ?? '' });
    const script = await writeScript(scratch.path, [{ text: 'First.' }, { text: 'Second.' }]);
    const started = await runCli(['--scripted', script, '-p', 'one', '--output-format', 'json'], {
      cwd: first ?? '',
      env,
    });
    const { sessionId } = JSON.parse(started.stdout) as { sessionId: string };
    // The same folder: no note.
    const again = await runCli(
      [
        '--scripted',
        await writeScript(scratch.path, [{ text: 'Again.' }], 'again.json'),
        '-p',
        'two',
        '--resume',
        sessionId,
      ],
      {
        cwd: first ?? '',
        env,
      },
    );
    expect(again.code).toBe(0);
    expect(again.stderr).not.toContain('ran in another folder');
    const elsewhere = await runCli(
      [
        '--scripted',
        await writeScript(scratch.path, [{ text: 'Elsewhere.' }], 'elsewhere.json'),
        '-p',
        'three',
        '--resume',
        sessionId,
      ],
      { cwd: second ?? '', env },
    );
    expect(elsewhere.code).toBe(0);
    expect(elsewhere.stdout).toBe('Elsewhere.\n');
    expect(elsewhere.stderr).toContain(
      `note: session ${sessionId} ran in another folder (its sessions are project-one…); it goes on here, in ${second}, with this folder's files and settings.`,
    );
  });
});
