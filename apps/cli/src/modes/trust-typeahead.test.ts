// A key typed before the trust question is on screen is not its answer. A `y` typed while the CLI
// started (the first letter of a prompt, a habit from another tool) answered the question as soon
// as it appeared: the folder was trusted for good and its hook ran.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
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
beforeEach(skipWithout('tmux'));
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('the trust question', () => {
  it.each([
    ['y', 'y'],
    ['Y', 'Y'],
    ['a line being typed that starts with y', 'yes fix the bug'],
  ])('is not answered by %s typed before it appeared', async (_label, typed) => {
    const dir = await tempDir('agent-cli-trust-typeahead-');
    cleanups.push(dir.dispose);
    const repo = join(dir.path, 'repo');
    const home = join(dir.path, 'home');
    const ran = join(dir.path, 'HOOK-RAN');
    await mkdir(join(repo, '.agent'), { recursive: true });
    await mkdir(join(repo, '.git'));
    await writeFile(
      join(repo, '.agent', 'settings.json'),
      JSON.stringify({
        hooks: { SessionStart: [{ hooks: [{ type: 'command', command: `touch '${ran}'` }] }] },
      }),
    );
    const script = await writeScript(dir.path, [{ text: 'done' }]);
    const tmux = TmuxSession.start([process.execPath, cliPath, '--scripted', script], {
      cwd: repo,
      env: cleanEnv({ AGENT_HOME: home }),
    });
    cleanups.push(() => tmux.kill());
    // Typed at once: the CLI is still starting, and the terminal echoes it (it is not raw yet).
    tmux.type(typed);
    const waitFor = (text: string) =>
      vi.waitFor(() => expect(tmux.capture()).toContain(text), screenWaitOptions);
    // Its answer keys are drawn a moment after the question (keys before are not an answer).
    await waitFor('Trust this folder? [y] yes');
    const shown = tmux.capture();
    expect(shown.startsWith(typed), `typed before the question; the screen:\n${shown}`).toBe(true);
    // Still waiting for an answer: nothing trusted, nothing ran.
    expect(tmux.capture()).not.toContain('(start without it) yes');
    expect(existsSync(join(home, 'trusted-folders.json'))).toBe(false);
    tmux.type('n');
    await waitFor('is not a trusted folder');
    await waitFor('>');
    expect(existsSync(ran)).toBe(false);
    expect(existsSync(join(home, 'trusted-folders.json'))).toBe(false);
  });
});
