// A new user at a real terminal (tmux): Ctrl-C at each question the CLI asks before a session
// starts ends it quietly with 130 and starts nothing; the demo stopped by Ctrl-C or by a reader
// that goes away (`| head`) removes its temp folders (a real process); and `agent mcp serve` typed at a terminal
// says it waits for a client instead of sitting there silent.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
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

const cleanups: (() => Promise<void> | void)[] = [];
async function scratch(): Promise<string> {
  const dir = await tempDir('agent-first-terminal-');
  cleanups.push(dir.dispose);
  return dir.path;
}

beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function start(args: readonly string[], options: { cwd: string; env: Record<string, string> }) {
  const tmux = TmuxSession.start([process.execPath, cliPath, ...args], options);
  cleanups.push(() => tmux.kill());
  return tmux;
}

const waitFor = (tmux: TmuxSession, text: string) =>
  vi.waitFor(() => expect(tmux.capture()).toContain(text), screenWaitOptions);

const exited = (tmux: TmuxSession) => tmux.waitForExit();

describe('Ctrl-C before the session starts', () => {
  beforeEach(skipWithout('tmux'));
  it('at the list of sessions to resume: exit 130, no stack, the session files untouched', async () => {
    const dir = await scratch();
    const home = join(dir, 'home');
    const env = cleanEnv({ AGENT_HOME: home });
    const script = await writeScript(dir, [{ text: 'one' }, { text: 'two' }]);
    for (const prompt of ['first question', 'second question']) {
      const run = await runCli(['--scripted', script, '-p', prompt, '--cwd', dir], { env });
      expect(run.code).toBe(0);
    }
    const sessions = join(home, 'sessions');
    const [folder = ''] = await readdir(sessions);
    const before = await readdir(join(sessions, folder));
    for (const key of ['C-c', 'C-d']) {
      const tmux = start(['--scripted', script, '--resume', '--cwd', dir], { cwd: dir, env });
      await waitFor(tmux, 'Resume which (1-2)?');
      expect(tmux.capture()).toContain('second question');
      tmux.type('9');
      tmux.press('Enter');
      await waitFor(tmux, 'Type a number from 1 to 2 and press Enter (Ctrl-C quits).');
      tmux.press(key);
      expect(await exited(tmux)).toBe(130);
      const screen = tmux.capture();
      expect(screen).not.toContain('unexpected error');
      expect(screen).not.toMatch(/\n\s+at .+:\d+:\d+/);
      expect(screen).not.toContain('agent —');
      tmux.kill();
      await writeFile(join(dir, '.exit-status'), '');
    }
    expect(await readdir(join(sessions, folder))).toEqual(before);
  });

  it('at the trust question: exit 130, nothing of the folder ran, nothing trusted', async () => {
    const dir = await scratch();
    const repo = join(dir, 'repo with space ü');
    const home = join(dir, 'home');
    await mkdir(join(repo, '.agent'), { recursive: true });
    await mkdir(join(repo, '.git'));
    const canary = join(dir, 'hook-ran');
    await writeFile(
      join(repo, '.agent', 'settings.json'),
      JSON.stringify({
        hooks: {
          SessionStart: [{ hooks: [{ type: 'command', command: `touch '${canary}'` }] }],
        },
      }),
    );
    const script = await writeScript(dir, [{ text: 'hello' }]);
    const tmux = start(['--scripted', script, '--cwd', repo], {
      cwd: dir,
      env: cleanEnv({ AGENT_HOME: home }),
    });
    await waitFor(tmux, 'Trust this folder? [y] yes [n] no (start without it)');
    expect(tmux.capture()).toContain(`touch '${canary}'`);
    tmux.press('C-c');
    expect(await exited(tmux)).toBe(130);
    const screen = tmux.capture();
    expect(screen).not.toContain('is not a trusted folder');
    expect(screen).not.toContain('agent —');
    expect(existsSync(canary)).toBe(false);
    expect(existsSync(join(home, 'trusted-folders.json'))).toBe(false);
  });

  it('"n" at the trust question still starts the session without the folder’s configuration', async () => {
    const dir = await scratch();
    const repo = join(dir, 'repo');
    await mkdir(join(repo, '.agent'), { recursive: true });
    await mkdir(join(repo, '.git'));
    await writeFile(
      join(repo, '.agent', 'settings.json'),
      JSON.stringify({ env: { FROM_REPO: '1' } }),
    );
    const script = await writeScript(dir, [{ text: 'hello' }]);
    const tmux = start(['--scripted', script, '--cwd', repo], {
      cwd: dir,
      env: cleanEnv({ AGENT_HOME: join(dir, 'home') }),
    });
    await waitFor(tmux, 'Trust this folder? [y] yes');
    tmux.press('n');
    await waitFor(tmux, 'is not a trusted folder');
    await vi.waitFor(
      () => expect(tmux.capture().trimEnd().endsWith('>')).toBe(true),
      screenWaitOptions,
    );
  });
});

describe('agent with one end not a terminal', () => {
  beforeEach(skipWithout('tmux'));

  it('agent | cat (stdout a pipe, stdin the terminal): names stdout, not stdin', async () => {
    const dir = await scratch();
    const tmux = TmuxSession.start(['sh', '-c', `'${process.execPath}' '${cliPath}' | cat`], {
      cwd: dir,
      env: cleanEnv({ AGENT_HOME: join(dir, 'home') }),
    });
    cleanups.push(() => tmux.kill());
    await waitFor(
      tmux,
      'No prompt, and stdout is not a terminal, which an interactive session needs',
    );
    expect(tmux.capture()).not.toContain('stdin is not a terminal');
  });

  it('echo … | agent (stdin a pipe): names stdin and the -p that reads it', async () => {
    const dir = await scratch();
    const run = await runCli([], {
      env: cleanEnv({ AGENT_HOME: join(dir, 'home') }),
      input: 'fix it',
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('No prompt, and stdin is not a terminal');
    expect(run.stderr).toContain('… | agent -p to make what is piped in the prompt');
  });
});

describe('slash commands a new user types', () => {
  beforeEach(skipWithout('tmux'));

  it('a typo is answered with the nearest command, another agent’s with what does it here', async () => {
    const dir = await scratch();
    const script = await writeScript(dir, [{ text: 'hello' }]);
    const tmux = start(['--scripted', script, '--cwd', dir], {
      cwd: dir,
      env: cleanEnv({ AGENT_HOME: join(dir, 'home') }),
    });
    await waitFor(tmux, 'Ctrl-C twice at the prompt');
    const answers: [string, string][] = [
      ['/exti', 'unknown command /exti: did you mean /exit? (/help lists them)'],
      ['/modle', 'unknown command /modle: did you mean /mode?'],
      ['/permisions', 'did you mean /permissions?'],
      ['/resume', 'no /resume here: a session is resumed from the shell: agent --resume'],
      ['/login', 'no /login here: keys come from the environment: export ANTHROPIC_API_KEY='],
      ['/mode acceptEdits', '(for acceptEdits, use workspace-write)'],
      ['/zzzz', 'unknown command /zzzz; /help lists them'],
      // Other agents' names for going back, starting over, memory and export.
      ['/undo', 'no /undo here: /rewind lists your earlier prompts'],
      ['/restore', 'no /restore here: /rewind lists your earlier prompts'],
      ['/new', 'no /new here: /clear starts a new conversation'],
      ['/reset', 'no /reset here: /clear starts a new conversation'],
      ['/memory', 'no /memory here: write AGENTS.md in the project'],
      ['/export', 'no /export here: /save <file> writes the conversation as JSON'],
      ['/context', 'no /context here: /cost shows the tokens used'],
      // How to come back tomorrow is in /help.
      ['/help', 'agent --continue resumes the newest of this folder'],
    ];
    for (const [typed, answer] of answers) {
      tmux.type(typed);
      tmux.press('Enter');
      await waitFor(tmux, answer);
    }
    // Still the default mode: nothing above changed it.
    tmux.type('/mode');
    tmux.press('Enter');
    await waitFor(tmux, 'mode is default; choose one of');
    tmux.type('/exit');
    tmux.press('Enter');
    expect(await exited(tmux)).toBe(0);
  });
});

describe('a long tool result', () => {
  beforeEach(skipWithout('tmux'));

  it('/output prints the whole of the last result (the transcript shows its first line and a count)', async () => {
    const dir = await scratch();
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'seq 1 300' } }] },
      { text: 'Counted.' },
    ]);
    const tmux = start(
      ['--scripted', script, '--cwd', dir, '--allow', 'bash(seq *)', '--sandbox', 'off'],
      { cwd: dir, env: cleanEnv({ AGENT_HOME: join(dir, 'home') }) },
    );
    await waitFor(tmux, 'Ctrl-C twice at the prompt');
    tmux.type('/output');
    tmux.press('Enter');
    await waitFor(tmux, 'no tool result in this conversation yet');
    tmux.type('count');
    tmux.press('Enter');
    await waitFor(tmux, 'Counted.');
    expect(tmux.capture()).toContain('(+300 lines)');
    expect(tmux.capture()).not.toContain('\n299\n');
    tmux.type('/output');
    tmux.press('Enter');
    await waitFor(tmux, '\n299\n300\n');
    expect(tmux.capture()).toMatch(/✓ bash \(\S+\), \d+ lines:\n/);
    tmux.type('/output 2');
    tmux.press('Enter');
    await waitFor(tmux, 'only 1 tool result in this conversation');
    tmux.type('/expand');
    tmux.press('Enter');
    await waitFor(tmux, 'no /expand here: /output [n] prints the whole result');
    tmux.type('/exit');
    tmux.press('Enter');
    expect(await exited(tmux)).toBe(0);
  });
});

describe('agent demo cut short', () => {
  /** Starts the demo and resolves with its workspace once the line naming it is out. */
  async function startDemo() {
    const child = spawn(process.execPath, [cliPath, 'demo'], {
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(() => {
      child.kill('SIGKILL');
    });
    let stdout = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const workspace = await new Promise<string>((resolve) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        const found = /workspace: (\S+) \(removed afterwards\)/.exec(stdout);
        if (found?.[1] !== undefined) resolve(found[1]);
      });
    });
    expect(existsSync(workspace)).toBe(true);
    return { child, workspace, output: () => ({ stdout, stderr }) };
  }

  it('Ctrl-C (SIGINT) stops it: exit 130, its temporary workspace removed', async () => {
    const demo = await startDemo();
    demo.child.kill('SIGINT');
    const [code] = (await once(demo.child, 'close')) as [number];
    expect(code).toBe(130);
    expect(existsSync(demo.workspace)).toBe(false);
    expect(demo.output().stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  });

  it('a reader that goes away (agent demo | head -2): no EPIPE stack, workspace removed', async () => {
    const demo = await startDemo();
    demo.child.stdout.destroy();
    const [code] = (await once(demo.child, 'close')) as [number];
    expect(code).toBe(130);
    expect(demo.output().stderr).toBe('');
    expect(existsSync(demo.workspace)).toBe(false);
  });
});

describe('agent mcp serve typed at a terminal', () => {
  beforeEach(skipWithout('tmux'));
  it('says it waits for an MCP client and how one starts it; Ctrl-C stops it', async () => {
    const dir = await scratch();
    const tmux = start(['mcp', 'serve', '--cwd', dir], {
      cwd: dir,
      env: cleanEnv({ AGENT_HOME: join(dir, 'home') }),
    });
    await waitFor(tmux, 'waiting for an MCP client on stdin');
    expect(tmux.capture()).toContain('claude mcp add agent -- agent mcp serve');
    tmux.press('C-c');
    await exited(tmux);
  });

  it('started by a client (stdin a pipe), it does not say so', async () => {
    const dir = await scratch();
    const run = await runCli(['mcp', 'serve', '--cwd', dir], {
      env: cleanEnv({ AGENT_HOME: join(dir, 'home') }),
      input: '',
    });
    expect(run.stderr).toContain('tools over stdio');
    expect(run.stderr).not.toContain('waiting for an MCP client');
  });
});
