// The wait before a model's answer starts, in a real terminal (tmux): a slow or silent model showed
// nothing at all after the prompt, so the session looked hung. Now a spinner says it waits, with
// the time, until the answer starts or Ctrl-C stops it, and leaves no trace on the screen.
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Harness } from '../testing/repl-harness.js';
import { assertBuilt } from '../testing/test-support.js';

const harness = new Harness();
beforeAll(() => assertBuilt());
beforeEach(skipWithout('tmux'));
afterEach(() => harness.dispose());

describe('waiting for the model', () => {
  it('is shown while nothing has come, and gone when Ctrl-C stops it or the answer comes', async () => {
    const folder = await harness.folder('agent-model-wait-');
    // The first turn sends its start, then holds every next event for a minute (stopped by Ctrl-C).
    const repl = await harness.start({
      ...folder,
      script: { steps: [{ text: 'never shown', delayMs: 60_000 }, { text: 'Prompt answer.' }] },
    });
    await repl.waitForPrompt();
    repl.submit('hello');
    await repl.waitForText('waiting for the model');
    expect(repl.screen()).toMatch(/waiting for the model \d+\.\ds/);
    repl.tmux.press('C-c');
    await repl.waitForText('(aborted)');
    await repl.waitForPrompt(2);
    expect(repl.screen()).not.toContain('waiting for the model');
    repl.submit('again');
    await repl.waitForText('Prompt answer.');
    await repl.waitForPrompt(3);
    expect(repl.screen()).not.toContain('waiting for the model');
    expect(repl.screen()).not.toContain('never shown');
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });
});
