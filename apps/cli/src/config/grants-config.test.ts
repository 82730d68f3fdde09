// Grants kept with a session (--keep-grants), /clear starting a new session file, and the config
// tools (config, config_set) through the real loop: the built CLI as a child process, and the REPL
// in tmux.
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
  cliPath,
  runCli,
  screenWaitOptions,
  TmuxSession,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

const sessions: TmuxSession[] = [];
const cleanups: (() => Promise<void>)[] = [];

beforeAll(() => {
  assertBuilt();
});
afterEach(async () => {
  for (const session of sessions.splice(0)) session.kill();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const waitOptions = screenWaitOptions;

/** A scratch folder with a workspace `ws` and an agent home `home`. */
async function scratch() {
  const dir = await tempDir('agent-cli-grants-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  const home = join(dir.path, 'home');
  await mkdir(workspace);
  return { dir: dir.path, workspace, home, env: cleanEnv({ AGENT_HOME: home }) };
}

/** The REPL in tmux on a script, with helpers to type and wait. */
function repl(args: string[], cwd: string, env: Record<string, string>) {
  const tmux = TmuxSession.start([process.execPath, cliPath, ...args], { cwd, env });
  sessions.push(tmux);
  const waitForText = (text: string, count = 1) => tmux.waitForText(text, count);
  const submit = (text: string) => {
    tmux.type(text);
    tmux.press('Enter');
  };
  const exit = async () => {
    submit('/exit');
    await vi.waitFor(() => expect(tmux.exitStatus()).toBe(0), waitOptions);
  };
  return { tmux, waitForText, submit, exit };
}

/** The saved session files of the agent home (one workspace), oldest first. */
async function sessionFiles(home: string): Promise<string[]> {
  const [workspaceDir] = await readdir(join(home, 'sessions'));
  const dir = join(home, 'sessions', workspaceDir ?? '');
  return (await readdir(dir)).sort().map((name) => join(dir, name));
}

interface SavedFile {
  messages: { role: string; content: unknown; model?: string }[];
  grants?: { tool: string; subject?: string; decision: string }[];
}

describe('grants kept with the session', () => {
  beforeEach(skipWithout('tmux'));
  it('an "always" answer is saved with the session; --continue --keep-grants restores it, plain --continue does not', async () => {
    const { dir, workspace, home, env } = await scratch();
    const touch = { name: 'bash', arguments: { command: 'touch a.txt' } };
    const first = await writeScript(dir, [{ toolCalls: [touch] }, { text: 'Touched.' }], '1.json');
    const session = repl(['--scripted', first, '--cwd', workspace], dir, env);
    await session.waitForText('> ');
    session.submit('touch a.txt');
    await session.waitForText('Allow bash: touch a.txt? [y] once  [a] always  [n] deny  [v] never');
    session.tmux.press('a');
    await session.waitForText('Touched.');
    await session.exit();
    const [saved] = await sessionFiles(home);
    const file = JSON.parse(await readFile(saved ?? '', 'utf8')) as SavedFile;
    expect(file.grants).toEqual([{ tool: 'bash', subject: 'touch a.txt', decision: 'allow' }]);

    // The same call again, non-interactively (nobody to ask): only the restored grant lets it run.
    const again = await writeScript(dir, [{ toolCalls: [touch] }, { text: 'Again.' }], '2.json');
    const args = ['-p', 'again', '--continue', '--scripted', again, '--cwd', workspace];
    const plain = await runCli([...args, '--mode', 'default'], { env });
    expect(plain.code).toBe(4);
    expect(plain.stderr).toContain(
      '1 "always" grant saved with this session was not restored (--keep-grants',
    );
    // Not restored, but still saved: a later --keep-grants finds it.
    const afterPlain = JSON.parse(await readFile(saved ?? '', 'utf8')) as SavedFile;
    expect(afterPlain.grants).toEqual(file.grants);
    const kept = await runCli([...args, '--mode', 'default', '--keep-grants'], { env });
    expect(kept.stderr).not.toContain('not restored');
    expect(kept.stderr).toContain('✓ bash');
    expect(kept.code).toBe(0);
    expect(kept.stdout).toContain('Again.');
  });

  it('/clear starts a new session file; the conversation saved before it stays', async () => {
    const { dir, workspace, home, env } = await scratch();
    const script = await writeScript(dir, [{ text: 'First answer.' }, { text: 'Second answer.' }]);
    const session = repl(['--scripted', script, '--cwd', workspace], dir, env);
    await session.waitForText('> ');
    session.submit('first question');
    await session.waitForText('First answer.');
    session.submit('/clear');
    await session.waitForText('new session file');
    session.submit('second question');
    await session.waitForText('Second answer.');
    await session.exit();
    const files = await sessionFiles(home);
    expect(files).toHaveLength(2);
    const texts = await Promise.all(files.map((path) => readFile(path, 'utf8')));
    const before = texts.find((text) => text.includes('first question'));
    const after = texts.find((text) => text.includes('second question'));
    expect(before).toBeDefined();
    expect(before).not.toContain('second question');
    expect(after).toBeDefined();
    expect(after).not.toContain('first question');
  });
});

describe('config tools through the loop', () => {
  it('config reads the settings; config_set of the mode is asked, so -p denies it and names the rule', async () => {
    const { dir, workspace, env } = await scratch();
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'config', arguments: {} }] },
      { toolCalls: [{ name: 'config_set', arguments: { setting: 'mode', value: 'full-access' } }] },
      { text: 'done' },
    ]);
    const run = await runCli(
      [
        '-p',
        'widen',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--deny',
        'bash(rm *)',
        '--output-format',
        'stream-json',
      ],
      { env },
    );
    expect(run.code).toBe(4);
    const results = run.stdout
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as { type: string; toolName?: string; text?: string; isError?: boolean },
      )
      .filter((event) => event.type === 'tool-result');
    const read = JSON.parse(results[0]?.text ?? '{}') as {
      mode?: string;
      rules?: { deny: string[] };
      model?: string;
      sandbox?: string;
      mcpServers?: unknown[];
    };
    expect(read).toMatchObject({ mode: 'read-only', model: 'scripted', mcpServers: [] });
    expect(read.rules?.deny).toEqual(['bash(rm *)']);
    expect(typeof read.sandbox).toBe('string');
    expect(results[1]).toMatchObject({ toolName: 'config_set', isError: true });
    expect(results[1]?.text).toContain("--allow 'config_set(mode:full-access)'");
  });

  it('a rule the user gives lets config_set change the mode; the next calls run under it', async () => {
    const { dir, workspace, env } = await scratch();
    const script = await writeScript(dir, [
      {
        toolCalls: [
          { name: 'config_set', arguments: { setting: 'mode', value: 'workspace-write' } },
        ],
      },
      {
        toolCalls: [{ name: 'write_file', arguments: { path: 'made.txt', content: 'made\n' } }],
      },
      { toolCalls: [{ name: 'config', arguments: {} }] },
      { text: 'done' },
    ]);
    const run = await runCli(
      [
        '-p',
        'switch',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--allow',
        'config_set(mode:workspace-write)',
      ],
      { env },
    );
    expect(run.stderr).toContain(
      '✓ config_set: The permission mode is now workspace-write (was read-only).',
    );
    expect(run.stderr).toContain('✓ write_file');
    expect(run.stderr).toContain('"mode":"workspace-write"');
    expect(run.code).toBe(0);
    expect(existsSync(join(workspace, 'made.txt'))).toBe(true);
  });

  it('config_set of the model asks on the terminal; once allowed, the next prompt runs on that model', async (context) => {
    skipWithout('tmux')(context);
    const { dir, workspace, env } = await scratch();
    const script = await writeScript(dir, [
      {
        toolCalls: [{ name: 'config_set', arguments: { setting: 'model', value: 'other-model' } }],
      },
      { text: 'Switching.' },
      { text: 'Hello from the other model.' },
    ]);
    const session = repl(['--scripted', script, '--cwd', workspace], dir, env);
    await session.waitForText('> ');
    session.submit('use the other model');
    await session.waitForText('Allow config_set: model:other-model? [y] once');
    session.tmux.press('y');
    await session.waitForText(
      'model: other-model (chosen with config_set; the conversation goes on)',
    );
    session.submit('hello');
    await session.waitForText('Hello from the other model.');
    session.submit('/save saved.json');
    await session.waitForText(' messages to saved.json');
    await session.exit();
    const saved = JSON.parse(await readFile(join(dir, 'saved.json'), 'utf8')) as SavedFile;
    const assistants = saved.messages.filter((message) => message.role === 'assistant');
    expect(assistants.at(-1)?.model).toBe('other-model');
    expect(assistants[0]?.model).not.toBe('other-model');
  });
});
