// A /rewind cut short (the CLI killed halfway, tmux): running it again must finish the files left,
// not refuse every file already put back as "changed outside the file tools".
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { Harness } from '../testing/repl-harness.js';
import { assertBuilt, cleanEnv } from '../testing/test-support.js';

const harness = new Harness();
beforeAll(() => assertBuilt());
beforeEach(skipWithout('tmux'));
afterEach(() => harness.dispose());

const write = (path: string, content: string) => ({
  name: 'write_file',
  arguments: { path, content },
});
const edit = (path: string) => ({
  name: 'edit_file',
  arguments: { path, old_string: 'one', new_string: 'two' },
});
// Generous: the official CI's load once kept the first rewind from a.txt for over 20 s (stop 46).
const waitOptions = { timeout: 60_000, interval: 50 };

/** The pid of the CLI in a tmux pane (the pane runs `sh -c '<cli>; echo $? > …'`). */
function cliPid(socket: string): number {
  const shell = spawnSync('tmux', ['-L', socket, 'display-message', '-p', '#{pane_pid}'], {
    encoding: 'utf8',
  }).stdout.trim();
  const children = readFileSync(`/proc/${shell}/task/${shell}/children`, 'utf8').trim();
  const pid = Number(children.split(' ')[0]);
  expect(pid).toBeGreaterThan(0);
  return pid;
}

describe('/rewind cut short (tmux)', () => {
  it('run again, it finishes the files left instead of refusing the ones done', async () => {
    const folder = await harness.folder('agent-cli-rewind-cut-');
    const home = join(folder.dir, 'home');
    const env = cleanEnv({ AGENT_HOME: home });
    const save = join(folder.dir, 'conversation.json');
    const args = ['--mode', 'full-access', '--sandbox', 'off', '--save', save];
    const first = await harness.start({
      ...folder,
      env,
      script: {
        steps: [
          { toolCalls: [write('a.txt', 'alpha one\n'), write('b.txt', 'beta one\n')] },
          { text: 'Created.' },
          { toolCalls: [edit('a.txt'), edit('b.txt')] },
          { text: 'Changed.' },
        ],
      },
      args,
    });
    await first.waitForPrompt();
    first.submit('create them');
    await first.waitForText('Created.');
    await first.waitForPrompt(2);
    first.submit('change them');
    await first.waitForText('Changed.');
    await first.waitForPrompt(3);
    first.submit('/exit');
    expect(await first.waitForExit()).toBe(0);
    const file = (name: string) => join(folder.workspace, name);
    expect(await readFile(file('b.txt'), 'utf8')).toBe('beta two\n');

    // b.txt's copy becomes a FIFO: the rewind puts a.txt back, then waits on it — where it is killed.
    const [sessionDir] = await readdir(join(home, 'checkpoints'));
    const blobs = join(home, 'checkpoints', sessionDir as string, 'blobs');
    const bBlob = join(blobs, createHash('sha256').update('beta one\n').digest('hex'));
    await rm(bBlob);
    expect(spawnSync('mkfifo', [bBlob]).status).toBe(0);
    const resumeArgs = ['--resume', save, ...args];
    // Each pane writes its exit status to the same file: the last one's is read.
    const exitStatus = join(folder.dir, '.exit-status');
    await rm(exitStatus);
    const cut = await harness.start({
      ...folder,
      env,
      name: 'cut',
      script: { steps: [{ text: 'unused' }] },
      args: resumeArgs,
    });
    await cut.waitForPrompt();
    cut.submit('/rewind 2 code');
    await vi.waitFor(
      async () =>
        expect(await readFile(file('a.txt'), 'utf8'), `the screen:\n${cut.screen()}`).toBe(
          'alpha one\n',
        ),
      waitOptions,
    );
    expect(await readFile(file('b.txt'), 'utf8')).toBe('beta two\n');
    process.kill(cliPid(cut.tmux.socket), 'SIGKILL');
    expect(await cut.waitForExit()).toBe(137);
    await rm(exitStatus);
    // The copy is whole again (the FIFO was only the way to stop the rewind at that point).
    await rm(bBlob);
    await writeFile(bBlob, 'beta one\n', { mode: 0o600 });

    const again = await harness.start({
      ...folder,
      env,
      name: 'again',
      script: { steps: [{ text: 'unused' }] },
      args: resumeArgs,
    });
    await again.waitForPrompt();
    again.submit('/rewind 2 code');
    // Done (`files: …`) or refused (`nothing rewound: …`).
    await vi.waitFor(() => expect(again.screen()).toMatch(/files: |nothing rewound/), waitOptions);
    const screen = again.screen();
    expect(screen).not.toContain('nothing rewound');
    expect(screen).not.toContain('changed since the agent last wrote it');
    expect(screen).toContain('restored b.txt');
    expect(await readFile(file('a.txt'), 'utf8')).toBe('alpha one\n');
    expect(await readFile(file('b.txt'), 'utf8')).toBe('beta one\n');
    again.submit('/exit');
    expect(await again.waitForExit()).toBe(0);
  }, 240_000);
});
