// A question taller than the terminal has its start scrolled away when its answer keys are drawn:
// `rm -rf ./precious; echo aaaa…` (7,000 characters, shown twice — the line and its subjects — within what a question shows) left the user
// looking at a screen of `a`s ending in `[y] once`. The keys line says the question starts above.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
  cliPath,
  screenWaitOptions,
  TmuxSession,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('an approval taller than the terminal (tmux, 200×50)', () => {
  it('says it starts above; a short one does not', async (context) => {
    skipWithout('tmux')(context);
    const dir = await tempDir('agent-cli-tall-question-');
    cleanups.push(dir.dispose);
    const workspace = join(dir.path, 'ws');
    await mkdir(workspace);
    const script = await writeScript(dir.path, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'touch short' } }] },
      {
        toolCalls: [
          { name: 'bash', arguments: { command: `rm -rf ./precious; echo ${'a'.repeat(7000)}` } },
        ],
      },
      { text: 'all done' },
    ]);
    const tmux = TmuxSession.start(
      [process.execPath, cliPath, '--scripted', script, '--cwd', workspace, '-p', 'go'],
      { cwd: dir.path, env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }) },
    );
    cleanups.push(() => tmux.kill());
    const waitFor = (test: () => void) => vi.waitFor(test, screenWaitOptions);
    const note = 'the question is taller than your terminal: it starts above';
    await waitFor(() => expect(tmux.capture()).toContain('[y] once'));
    expect(tmux.capture()).not.toContain(note);
    tmux.type('n');
    await waitFor(() => expect(tmux.capture().split('[y] once').length - 1).toBe(2));
    expect(tmux.capture()).toContain(note);
    tmux.type('n');
    await waitFor(() => expect(tmux.capture()).toContain('all done'));
  });
});

describe('a trust question taller than the terminal (tmux, 200×50)', () => {
  it('says it starts above', async (context) => {
    skipWithout('tmux')(context);
    const dir = await tempDir('agent-cli-tall-trust-');
    cleanups.push(dir.dispose);
    const repo = join(dir.path, 'repo');
    await mkdir(join(repo, '.agent'), { recursive: true });
    await mkdir(join(repo, '.git'));
    const hooks = Array.from({ length: 60 }, (_, i) => ({
      hooks: [{ type: 'command', command: `echo hook ${i}` }],
    }));
    await writeFile(
      join(repo, '.agent', 'settings.json'),
      JSON.stringify({ hooks: { SessionStart: hooks } }),
    );
    const script = await writeScript(dir.path, [{ text: 'hello' }]);
    const tmux = TmuxSession.start(
      [process.execPath, cliPath, '--scripted', script, '--cwd', repo],
      { cwd: dir.path, env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }) },
    );
    cleanups.push(() => tmux.kill());
    await vi.waitFor(
      () => expect(tmux.capture()).toContain('Trust this folder? [y] yes'),
      screenWaitOptions,
    );
    expect(tmux.capture()).toContain('the question is taller than your terminal: it starts above');
    tmux.press('n');
  });
});
