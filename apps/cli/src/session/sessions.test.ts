// Kept sessions: resumable by the id the json output prints, and removed after the retention
// period (or beyond a count per workspace) when the CLI starts.
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';
import { findSessionById, listSessions, newSessionPath, pruneSessions } from './sessions.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setup() {
  const dir = await tempDir('agent-cli-sessions-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const workspace = join(dir.path, 'ws');
  await mkdir(workspace, { recursive: true });
  await mkdir(home);
  return { dir: dir.path, home, workspace, env: cleanEnv({ AGENT_HOME: home }) };
}

const day = 24 * 60 * 60 * 1000;

/** A session file last written `daysAgo` days ago. */
async function oldSession(cwd: string, home: string, daysAgo: number): Promise<string> {
  const path = await newSessionPath(cwd, crypto.randomUUID(), home);
  await writeFile(path, JSON.stringify({ messages: [] }));
  const when = new Date(Date.now() - daysAgo * day);
  await utimes(path, when, when);
  return path;
}

describe('--resume <sessionId>', () => {
  it('resumes the session the json output named, in its own file, keeping its id', async () => {
    const { dir, workspace, env } = await setup();
    const first = await writeScript(dir, [{ text: 'noted 42' }], 'first.json');
    const run = await runCli(
      ['-p', 'remember 42', '--scripted', first, '--cwd', workspace, '--output-format', 'json'],
      { env },
    );
    const { sessionId } = JSON.parse(run.stdout) as { sessionId: string };
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const path = await findSessionById(sessionId, env.AGENT_HOME);
    expect(path).toBeDefined();
    expect(JSON.parse(await readFile(path as string, 'utf8')).sessionId).toBe(sessionId);

    // From another folder, as a script would: the id alone is enough.
    const second = await writeScript(dir, [{ text: 'it was 42' }], 'second.json');
    const resumed = await runCli(
      [
        '-p',
        'what number?',
        '--scripted',
        second,
        '--resume',
        sessionId,
        '--output-format',
        'json',
      ],
      { env, cwd: dir },
    );
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ sessionId, finalText: 'it was 42' });
    const saved = JSON.parse(await readFile(path as string, 'utf8')) as {
      sessionId: string;
      messages: { role: string }[];
    };
    expect(saved.sessionId).toBe(sessionId);
    expect(saved.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    // In upper case too (ids are copied by hand).
    const again = await runCli(
      ['-p', 'and now?', '--scripted', second, '--resume', sessionId.toUpperCase()],
      { env, cwd: dir },
    );
    expect(again.code).toBe(0);
  });

  it('a file resumed with --resume <file> keeps its id too', async () => {
    const { dir, workspace, env } = await setup();
    const script = await writeScript(dir, [{ text: 'a' }, { text: 'b' }]);
    const save = join(dir, 'mine.json');
    const first = await runCli(
      [
        '-p',
        'one',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--save',
        save,
        '--output-format',
        'json',
      ],
      { env },
    );
    const { sessionId } = JSON.parse(first.stdout) as { sessionId: string };
    const second = await runCli(
      [
        '-p',
        'two',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--resume',
        save,
        '--output-format',
        'json',
      ],
      { env },
    );
    expect(JSON.parse(second.stdout).sessionId).toBe(sessionId);
  });

  it.each([
    ['00000000-0000-4000-8000-000000000000', 'no session with this id is kept under'],
    ['no-such-file.json', 'no such file (and not a session id'],
  ])('--resume %s is an error that says what was looked for', async (value, message) => {
    const { dir, workspace, env } = await setup();
    const script = await writeScript(dir, [{ text: 'x' }]);
    const run = await runCli(
      ['-p', 'x', '--scripted', script, '--cwd', workspace, '--resume', value],
      {
        env,
      },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`--resume ${value}: ${message}`);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('retention', () => {
  it('removes session files older than 30 days at start by default; newer ones and other files stay', async () => {
    const { dir, home, workspace, env } = await setup();
    const old = await oldSession(workspace, home, 40);
    const elsewhere = join(dir, 'elsewhere');
    await mkdir(elsewhere);
    const oldElsewhere = await oldSession(elsewhere, home, 31);
    const recent = await oldSession(workspace, home, 29);
    const notes = join(home, 'sessions', 'README.txt');
    await writeFile(notes, 'mine');
    const script = await writeScript(dir, [{ text: 'ok' }]);
    const run = await runCli(['-p', 'x', '--scripted', script, '--cwd', workspace], { env });
    expect(run.code).toBe(0);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(oldElsewhere)).toBe(false);
    // Its workspace folder, now empty, is gone too.
    expect(existsSync(join(oldElsewhere, '..'))).toBe(false);
    expect(existsSync(recent)).toBe(true);
    expect(existsSync(notes)).toBe(true);
    // This run's own file, and the recent one.
    expect(await listSessions(workspace, home)).toHaveLength(2);
  });

  it('follows "sessions" of the user settings: keepDays and keepPerWorkspace; a resumed old one stays', async () => {
    const { dir, home, workspace, env } = await setup();
    await writeFile(
      join(home, 'settings.json'),
      JSON.stringify({ sessions: { keepDays: 5, keepPerWorkspace: 3 } }),
    );
    const sixDays = await oldSession(workspace, home, 6);
    const kept = await Promise.all([1, 2, 3, 4].map((days) => oldSession(workspace, home, days)));
    const script = await writeScript(dir, [{ text: 'ok' }]);
    const sessionId = JSON.parse(await readFile(sixDays, 'utf8')).sessionId as string | undefined;
    expect(sessionId).toBeUndefined();
    // Resuming the 6-day-old file keeps it (past keepDays); of the rest the newest 3 stay.
    const run = await runCli(
      ['-p', 'x', '--scripted', script, '--cwd', workspace, '--resume', sixDays],
      {
        env,
      },
    );
    expect(run.code).toBe(0);
    expect(existsSync(sixDays)).toBe(true);
    expect(kept.map((path) => existsSync(path))).toEqual([true, true, true, false]);
  });

  it('"sessions" in a project file is ignored, named in a notice; a bad value names the key', async () => {
    const { dir, home, workspace, env } = await setup();
    const script = await writeScript(dir, [{ text: 'ok' }]);
    await mkdir(join(workspace, '.agent'));
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({ sessions: { keepDays: 1 } }),
    );
    const project = await runCli(['-p', 'x', '--scripted', script, '--cwd', workspace], { env });
    expect(project.code, project.stderr).toBe(0);
    expect(project.stderr).toContain(
      `ignored "sessions" in ${join(workspace, '.agent', 'settings.json')}: only your settings`,
    );
    await writeFile(join(workspace, '.agent', 'settings.json'), '{}');
    for (const [value, message] of [
      [{ keepDays: 0 }, 'sessions.keepDays must be a whole number >= 1'],
      [{ keepDays: '30' }, 'sessions.keepDays must be a whole number >= 1'],
      [{ keep: 3 }, 'unknown sessions setting "keep"'],
      [30, '"sessions" must be an object'],
    ] as const) {
      await writeFile(join(home, 'settings.json'), JSON.stringify({ sessions: value }));
      const run = await runCli(['-p', 'x', '--scripted', script, '--cwd', workspace], { env });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(message);
    }
  });

  it('pruneSessions removes nothing it is told to keep and survives a missing folder', async () => {
    const { home, workspace } = await setup();
    expect(await pruneSessions({}, { home: join(home, 'missing') })).toBe(0);
    const old = await oldSession(workspace, home, 100);
    expect(await pruneSessions({ keepDays: 1 }, { home, keep: [old] })).toBe(0);
    expect(await pruneSessions({ keepDays: 1 }, { home })).toBe(1);
    expect(await readdir(join(home, 'sessions'))).toEqual([]);
  });
});
