// A narrow terminal (a split pane, a phone's SSH client): the spinner's line, wider than the
// terminal, wrapped, and each frame's `\r` went back to the start of its last row only — the
// rows above stayed, one per frame, ten a second: the screen filled with `⠋ waiting for the mod`
// and the transcript scrolled away. The line is now cut to the width, so nothing of it stays.
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
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

/**
 * Runs `shellLine(agent)` (the CLI answering "Short answer." after 2 s) in a terminal `columns`
 * wide; `drive` takes it from there until the run has ended. The screen then.
 */
async function narrowScreen(
  columns: number,
  shellLine: (agent: string) => string,
  drive: (tmux: TmuxSession) => Promise<void>,
): Promise<string> {
  const dir = await tempDir('agent-narrow-');
  cleanups.push(dir.dispose);
  const agent = (await slowAnswerCommand(dir.path, 'Short answer.', 2000))
    .map(shellQuoted)
    .join(' ');
  const tmux = TmuxSession.start(['sh', '-c', shellLine(agent)], {
    cwd: dir.path,
    env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }),
    columns,
  });
  cleanups.push(() => tmux.kill());
  await drive(tmux);
  return tmux.capture();
}

/** The rows a spinner frame left on the screen. */
const spinnerRows = (screen: string) =>
  screen.split('\n').filter((row) => /waiting for|the model \d/.test(row));

describe('a terminal 24 columns wide (tmux)', () => {
  it('the REPL: the wait leaves no rows behind', async () => {
    const screen = await narrowScreen(
      24,
      (agent) => agent,
      async (tmux) => {
        await tmux.waitForPrompt();
        tmux.type('hello');
        tmux.press('Enter');
        // The wait is shown (cut to the width) before the answer comes.
        await tmux.waitForText('waiting for');
        await tmux.waitForPrompt(2);
      },
    );
    expect(screen).toContain('Short answer.');
    expect(spinnerRows(screen)).toEqual([]);
  });

  it('agent -p, stderr the terminal: the same', async () => {
    const screen = await narrowScreen(
      24,
      (agent) => `${agent} -p hello; echo "exit=$?"`,
      async (tmux) => {
        await tmux.waitForText('waiting for');
        await tmux.waitForText('exit=0');
      },
    );
    expect(screen).toContain('Short answer.');
    expect(spinnerRows(screen)).toEqual([]);
  });
});
