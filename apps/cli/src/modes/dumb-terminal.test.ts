// `TERM=dumb` (Emacs' shell, some CI log viewers) shows escape sequences instead of obeying them:
// the spinner's `\r ESC[K` redraw, ten a second, and bracketed paste's `ESC[?2004h` filled the
// screen. The raw bytes the CLI wrote, recorded by script(1) in a real terminal (tmux), hold none
// of them there, and do with an ordinary TERM (the control: the spinner is really drawn).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
  screenWaitOptions,
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

const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/** One prompt answered after 1.5 s of nothing (the spinner's time to draw), then /exit; the raw output. */
async function rawSession(term: string): Promise<string> {
  const dir = await tempDir('agent-dumb-terminal-');
  cleanups.push(dir.dispose);
  const raw = join(dir.path, 'raw.txt');
  const command = [
    'env',
    `TERM=${term}`,
    ...(await slowAnswerCommand(dir.path, 'Slow answer.', 1500)),
  ];
  const tmux = TmuxSession.start(['script', '-q', '-f', raw, '-c', command.map(quote).join(' ')], {
    cwd: dir.path,
    env: cleanEnv(),
  });
  cleanups.push(() => tmux.kill());
  const waitFor = (text: string) =>
    vi.waitFor(() => expect(tmux.capture()).toContain(text), screenWaitOptions);
  await waitFor('Ctrl-C twice at the prompt');
  tmux.type('hello');
  tmux.press('Enter');
  await waitFor('Slow answer.');
  tmux.type('/exit');
  tmux.press('Enter');
  await vi.waitFor(() => expect(tmux.exitStatus()).toBe(0), screenWaitOptions);
  return readFileSync(raw, 'utf8');
}

describe('TERM=dumb', () => {
  it('no spinner redraws and no bracketed paste; the answer all the same', async () => {
    const raw = await rawSession('dumb');
    expect(raw).toContain('Slow answer.');
    expect(raw).not.toContain('\u001b[K');
    expect(raw).not.toContain('\u001b[?2004h');
    expect(raw).not.toContain('waiting for the model');
  });

  it('an ordinary terminal gets both (the control)', async () => {
    const raw = await rawSession('xterm-256color');
    expect(raw).toContain('Slow answer.');
    expect(raw).toContain('\u001b[?2004h');
    expect(raw).toContain('\r\u001b[K  ');
    expect(raw).toContain('waiting for the model');
  });
});
