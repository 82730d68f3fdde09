// Markdown in answers: rendered in the REPL on a terminal with colours (tmux), raw with NO_COLOR
// and when -p writes to a pipe.
import { mkdir } from 'node:fs/promises';
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
import { markdownFlushPoint } from './transcript.js';

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
const answer =
  '# Plan\n\nThis is **important** and `npm test` runs it.\n\n- first item\n- second item\n';

async function scratch() {
  const dir = await tempDir('agent-cli-markdown-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  await mkdir(workspace);
  const script = await writeScript(dir.path, [{ text: answer }]);
  return { dir: dir.path, workspace, script };
}

/** The REPL answering one prompt; returns the screen once the answer's last line is there. */
async function replScreen(env: Record<string, string>, lastLine: string): Promise<string> {
  const { dir, workspace, script } = await scratch();
  const tmux = TmuxSession.start(
    [process.execPath, cliPath, '--scripted', script, '--cwd', workspace],
    {
      cwd: dir,
      env,
    },
  );
  sessions.push(tmux);
  await vi.waitFor(() => expect(tmux.capture()).toContain('> '), waitOptions);
  tmux.type('make a plan');
  tmux.press('Enter');
  await vi.waitFor(() => expect(tmux.capture()).toContain(lastLine), waitOptions);
  const screen = tmux.capture();
  tmux.type('/exit');
  tmux.press('Enter');
  await vi.waitFor(() => expect(tmux.exitStatus()).toBe(0), waitOptions);
  return screen;
}

describe('markdownFlushPoint (where streamed Markdown is complete blocks)', () => {
  it('cuts after a blank line followed by a line at column 0, never inside a fence or before a continuation', () => {
    expect(markdownFlushPoint('One.\n\nTwo.\n')).toBe(6);
    expect(markdownFlushPoint('One.\n\nTw')).toBe(0);
    expect(markdownFlushPoint('One.\nstill one\n')).toBe(0);
    expect(markdownFlushPoint('```\ncode\n\nmore\n')).toBe(0);
    expect(markdownFlushPoint('```\ncode\n\nmore\n```\n\nNext.\n')).toBe(20);
    expect(markdownFlushPoint('1. Step\n\n   details\n')).toBe(0);
    expect(markdownFlushPoint('- a\n- b\n\n| x | y |\n')).toBe(9);
  });
});

describe('markdown in answers', () => {
  beforeEach(skipWithout('tmux'));
  it('is rendered in the REPL on a terminal with colours', async () => {
    const screen = await replScreen(cleanEnv({ NO_COLOR: '' }), 'second item');
    expect(screen).toContain('This is important and npm test runs it.');
    expect(screen).not.toContain('**important**');
    expect(screen).not.toContain('# Plan');
    expect(screen).toMatch(/^\s*Plan\s*$/m);
    expect(screen).toMatch(/^\s+\* first item$/m);
  });

  it('stays raw with NO_COLOR, and when -p writes to a pipe', async () => {
    const screen = await replScreen(cleanEnv({ NO_COLOR: '1' }), '- second item');
    expect(screen).toContain('This is **important** and `npm test` runs it.');
    const { workspace, script } = await scratch();
    const run = await runCli(['-p', 'plan', '--scripted', script, '--cwd', workspace], {
      env: cleanEnv({ NO_COLOR: '' }),
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(answer);
  });
});
