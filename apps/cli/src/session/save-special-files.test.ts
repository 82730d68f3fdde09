// `--save` (and /save) naming something that is not a file: `--save /dev/null` is how a new user
// says "do not keep it", and the save — a temporary file renamed over the path — replaced the
// device with a JSON file (as root: /dev/null itself, for every program of the machine); a FIFO
// or a link to a device went the same way, after the run was paid for. Now the start refuses it,
// saying that sessions are kept anyway, and a save at any later moment leaves it as it is.
import { execFileSync } from 'node:child_process';
import { lstatSync, readlinkSync, statSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Agent } from '@agent/core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';
import { saveConversation } from './session-file.js';

const cleanups: (() => Promise<void>)[] = [];
async function scratch(): Promise<string> {
  const dir = await tempDir('agent-save-special-');
  cleanups.push(dir.dispose);
  return dir.path;
}
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A FIFO and a link to /dev/null in `dir`: never the real /dev/null, which a failure would replace. */
async function specialFiles(dir: string): Promise<{ fifo: string; deviceLink: string }> {
  const fifo = join(dir, 'pipe');
  execFileSync('mkfifo', [fifo]);
  const deviceLink = join(dir, 'null-link');
  await symlink('/dev/null', deviceLink);
  return { fifo, deviceLink };
}

function expectLeftAsTheyWere(files: { fifo: string; deviceLink: string }): void {
  expect(lstatSync(files.fifo).isFIFO()).toBe(true);
  expect(lstatSync(files.deviceLink).isSymbolicLink()).toBe(true);
  expect(readlinkSync(files.deviceLink)).toBe('/dev/null');
  expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
}

describe('--save naming a device or a FIFO', () => {
  it('is refused at the start (before the run), named, and left as it is', async () => {
    const dir = await scratch();
    const files = await specialFiles(dir);
    const script = await writeScript(dir, [{ text: 'the paid-for answer' }]);
    const home = join(dir, 'home');
    for (const [save, kind] of [
      [files.fifo, 'a FIFO (named pipe)'],
      [files.deviceLink, 'a device'],
    ] as const) {
      const run = await runCli(['--scripted', script, '--cwd', dir, '-p', 'hi', '--save', save], {
        env: cleanEnv({ AGENT_HOME: home }),
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `agent: --save ${save} is ${kind}, not a file: saving there would replace it. Name a file, e.g. --save session.json — or leave --save out: every session is kept anyway under ${join(home, 'sessions')}`,
      );
      expect(run.stdout).toBe('');
    }
    expectLeftAsTheyWere(files);
  }, 60_000);

  it('a save at a later moment (/save, a file replaced meanwhile) leaves it as it is', async () => {
    const dir = await scratch();
    const files = await specialFiles(dir);
    const agent = { messages: [], compactions: [] } as unknown as Agent;
    await expect(saveConversation(agent, files.fifo)).rejects.toThrow(
      `Cannot save the conversation to ${files.fifo}: it is a FIFO (named pipe), not a file, and was left as it is`,
    );
    await expect(saveConversation(agent, files.deviceLink)).rejects.toThrow('it is a device');
    expectLeftAsTheyWere(files);
  });
});
