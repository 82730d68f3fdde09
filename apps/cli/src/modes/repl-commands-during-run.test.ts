// A REPL command typed while a run goes (`/compact` while a tool runs) is the REPL's, not a
// message for the model: it runs once the run has ended, and the conversation never holds it.
import { existsSync, watch } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Harness } from '../testing/repl-harness.js';
import { assertBuilt } from '../testing/test-support.js';

const harness = new Harness();
beforeAll(() => assertBuilt());
beforeEach(skipWithout('tmux'));
afterEach(() => harness.dispose());

/** Resolves once `path` exists (woken by its folder's events). */
function untilExists(path: string): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (!existsSync(path)) return;
      watcher.close();
      resolve();
    };
    const watcher = watch(join(path, '..'), check);
    check();
  });
}

describe('commands typed during a run (tmux)', () => {
  it('/compact typed while a tool runs waits for the run; a plain line steers it', async () => {
    const folder = await harness.folder('agent-cli-command-during-run-');
    const save = join(folder.dir, 'conversation.json');
    const repl = await harness.start({
      ...folder,
      script: {
        steps: [
          { text: 'first answer' },
          {
            toolCalls: [
              {
                name: 'bash',
                arguments: { command: 'touch started; while [ ! -e go ]; do sleep 0.05; done' },
              },
            ],
          },
          { text: 'waited' },
          { text: 'SUMMARY: waited for go.' },
        ],
      },
      args: ['--mode', 'full-access', '--save', save],
    });
    await repl.waitForPrompt();
    repl.submit('hello');
    await repl.waitForText('first answer');
    await repl.waitForPrompt(2);
    repl.submit('wait for go');
    await untilExists(join(folder.workspace, 'started'));
    repl.submit('/compact keep it short');
    repl.submit('/tmp/notes.txt is where I keep notes');
    await repl.waitForText('⏎ after this run: /compact keep it short');
    await repl.waitForText('↳ steering: /tmp/notes.txt is where I keep notes');
    await writeFile(join(folder.workspace, 'go'), '');
    await repl.waitForText('waited');
    // Then the command ran: the summary call took the script's last step.
    await repl.waitForText('compacted');
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
    const saved = JSON.parse(await readFile(save, 'utf8')) as {
      messages: { role: string; content: unknown }[];
      compactions?: { summary: string }[];
    };
    const typed = saved.messages
      .filter((message) => message.role === 'user')
      .map((message) => JSON.stringify(message.content));
    expect(typed.some((text) => text.includes('/compact'))).toBe(false);
    expect(typed.some((text) => text.includes('/tmp/notes.txt'))).toBe(true);
    expect(saved.compactions?.[0]?.summary).toBe('SUMMARY: waited for go.');
  });
});
