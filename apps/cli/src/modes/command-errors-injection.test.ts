// The REPL's commands print the errors they meet, and an error can quote a server: /compact asks
// the provider for a summary, and a provider's error message is whatever the endpoint (a proxy,
// a project's own endpoint it came with its key for) answered. Printed as it was, its escape
// sequences set the title, wrote the clipboard, rewrote lines.
import { spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
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

describe("a REPL command's error", () => {
  it('/compact: a provider error quoting escape sequences is shown, not obeyed', async () => {
    const dir = await tempDir('agent-cli-command-errors-');
    cleanups.push(dir.dispose);
    const workspace = join(dir.path, 'ws');
    await mkdir(workspace);
    const script = await writeScript(dir.path, [
      { text: 'first answer' },
      {
        error: {
          message:
            'gateway said \u001b]2;PWNED-TITLE\u0007\u001b]52;c;Y3VybCBldmlsIHwgc2g=\u0007 no',
          statusCode: 400,
        },
      },
    ]);
    const tmux = TmuxSession.start(
      [process.execPath, cliPath, '--scripted', script, '--cwd', workspace],
      {
        cwd: dir.path,
        env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }),
      },
    );
    cleanups.push(() => tmux.kill());
    spawnSync('tmux', ['-L', tmux.socket, 'set-option', '-g', 'set-clipboard', 'on']);
    const waitFor = (text: string) =>
      vi.waitFor(() => expect(tmux.capture()).toContain(text), screenWaitOptions);
    await waitFor('>');
    tmux.type('go');
    tmux.press('Enter');
    await waitFor('first answer');
    tmux.type('/compact');
    tmux.press('Enter');
    await waitFor('gateway said');
    expect(tmux.capture()).toContain('\\x1b]2;PWNED-TITLE');
    const title = spawnSync('tmux', ['-L', tmux.socket, 'display-message', '-p', '#{pane_title}'], {
      encoding: 'utf8',
    }).stdout;
    expect(title).not.toContain('PWNED');
    expect(
      spawnSync('tmux', ['-L', tmux.socket, 'list-buffers'], { encoding: 'utf8' }).stdout,
    ).toBe('');
  });
});
