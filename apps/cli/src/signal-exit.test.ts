import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, cliPath, tempDir, writeScript } from './testing/test-support.js';

// A terminal closed under the CLI (SIGHUP) must not leave the commands it started running.

beforeAll(assertBuilt);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Live (not zombie) processes whose command line contains `tag` (or is exactly `exact`). */
function processesWith(tag: string, exact?: string): string[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
        if (/\) [ZX] /.test(stat)) return false;
        const commandLine = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
        return exact === undefined ? commandLine.includes(tag) : commandLine === exact;
      } catch {
        return false;
      }
    });
}

describe('signals end the CLI without leaving its commands behind', () => {
  it.each([
    ['SIGHUP', 129],
    ['SIGTERM', 130],
  ] as const)(
    '%s during an unsandboxed bash call: exit %i, nothing of the command left',
    async (signal, expected) => {
      const dir = await tempDir('agent-cli-signal-');
      cleanups.push(dir.dispose);
      const tag = `8${process.pid % 1000}.${Date.now() % 100_000}`;
      const script = await writeScript(dir.path, [
        {
          toolCalls: [
            {
              name: 'bash',
              arguments: {
                command: `setsid sh -c 'exec sleep ${tag}1' > /dev/null 2>&1 & exec sleep ${tag}2`,
              },
            },
          ],
        },
        { text: 'Done.' },
      ]);
      const child = spawn(
        process.execPath,
        [
          cliPath,
          '-p',
          'go',
          '--scripted',
          script,
          '--cwd',
          dir.path,
          '--sandbox',
          'off',
          '--mode',
          'full-access',
        ],
        { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      const exited = new Promise<number | null>((resolve) =>
        child.once('exit', (code) => resolve(code)),
      );
      // The command runs once its foreground sleep shows up (an event would need the CLI's help).
      // Match the sleep itself: a shell forked on the way there shows the whole line until it execs.
      // Both: the daemon's shell is forked first, but on a loaded machine it may not have run (and
      // exec'd its sleep) by the time the foreground sleep shows.
      const sleeping = () => [
        ...processesWith(`${tag}1`, `sleep\0${tag}1\0`),
        ...processesWith(`${tag}2`, `sleep\0${tag}2\0`),
      ];
      const deadline = Date.now() + 30_000;
      while (sleeping().length < 2 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(sleeping()).toHaveLength(2);
      child.kill(signal);
      expect(await exited, stderr).toBe(expected);
      // The CLI killed its commands' group as it ended; on a loaded machine the kernel may take a
      // moment to end each (gone, or a zombie, soon after — a command left behind stays for good).
      const gone = Date.now() + 10_000;
      while (processesWith(tag).length > 0 && Date.now() < gone) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(processesWith(tag)).toEqual([]);
    },
  );
});
