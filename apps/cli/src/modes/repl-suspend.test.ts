// Ctrl-Z at the REPL's prompt, then `fg`, in a real shell with job control (tmux, bash -i).
// readline turns raw mode off and on around the stop on its own input, which here is the prompt's
// PassThrough, not the terminal: after `fg` the terminal stayed in cooked mode, readline stayed
// paused, and nothing typed reached the REPL again (the line sat on the screen, the session hung).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
  screenWaitOptions,
  shellQuoted,
  slowAnswerCommand,
  TmuxSession,
  tempDir,
} from '../testing/test-support.js';

const cleanups: (() => void | Promise<void>)[] = [];
beforeAll(() => assertBuilt());
beforeEach(skipWithout('tmux'));
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('Ctrl-Z at the prompt, then fg (tmux, bash with job control)', () => {
  it('the REPL takes keys again: the line typed before the stop is kept and sent', async () => {
    const dir = await tempDir('agent-suspend-');
    cleanups.push(dir.dispose);
    const saved = join(dir.path, 'conversation.json');
    const agent = [...(await slowAnswerCommand(dir.path, 'The answer.', 0)), '--save', saved]
      .map(shellQuoted)
      .join(' ');
    const tmux = TmuxSession.start(['bash', '--norc', '--noprofile', '-i'], {
      cwd: dir.path,
      env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }),
    });
    cleanups.push(() => tmux.kill());
    // bash's own prompt (`bash-5.2$ `, `#` for root).
    await tmux.waitForScreen((screen) => expect(screen).toMatch(/[$#] *$/m));
    tmux.type(agent);
    tmux.press('Enter');
    await tmux.waitForText('Ctrl-C twice at the prompt');
    tmux.type('half a');
    tmux.press('C-z');
    await tmux.waitForText('Stopped');
    tmux.type('fg');
    tmux.press('Enter');
    // The prompt and the line are drawn again once the REPL runs.
    await tmux.waitForText('> half a', 2);
    tmux.type(' line');
    tmux.press('Enter');
    await tmux.waitForText('The answer.');
    await vi.waitFor(async () => {
      const { messages } = JSON.parse(await readFile(saved, 'utf8')) as {
        messages: { role: string; content: unknown }[];
      };
      expect(messages.find((message) => message.role === 'user')?.content).toBe('half a line');
    }, screenWaitOptions);
  });
});
