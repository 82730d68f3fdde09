import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defineTool, type Message, type ToolContext, userMessage } from '@agent/core';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { tempDir } from '../testing/test-support.js';
import {
  CheckpointStore,
  currentPrompt,
  pruneCheckpoints,
  withCheckpoints,
} from './checkpoints.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setup() {
  const dir = await tempDir('agent-cli-checkpoints-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  const outside = join(dir.path, 'outside');
  await mkdir(workspace);
  await mkdir(outside);
  const logged: string[] = [];
  const storeDir = join(dir.path, 'store');
  const open = () =>
    CheckpointStore.open({ dir: storeDir, workspace, log: (line) => logged.push(line) });
  return {
    workspace,
    outside,
    storeDir,
    open,
    logged,
    file: (name: string) => join(workspace, name),
  };
}

describe('CheckpointStore', () => {
  it('puts changed files back as they were before the prompt, mode included, and removes created ones', async () => {
    const t = await setup();
    await writeFile(t.file('a.txt'), 'a at first');
    await chmod(t.file('a.txt'), 0o640);
    const store = await t.open();
    // Prompt 0 changes a.txt twice and creates b.txt; only the first state counts.
    await store.keep([t.file('a.txt')], 0);
    await writeFile(t.file('a.txt'), 'a changed once');
    await chmod(t.file('a.txt'), 0o600);
    await store.keep([t.file('a.txt'), t.file('sub/b.txt')], 0);
    await writeFile(t.file('a.txt'), 'a changed twice');
    await mkdir(t.file('sub'));
    await writeFile(t.file('sub/b.txt'), 'b');
    // Prompt 4 changes a.txt again.
    await store.keep([t.file('a.txt')], 4);
    await writeFile(t.file('a.txt'), 'a changed at prompt 4');
    expect(store.filesChangedSince(0)).toEqual([t.file('a.txt'), t.file('sub/b.txt')]);
    expect(store.filesChangedSince(4)).toEqual([t.file('a.txt')]);

    // Reopened from disk: the checkpoints survive the process.
    const reopened = await t.open();
    const back4 = await reopened.restoreTo(4);
    expect(back4).toEqual({
      restored: [t.file('a.txt')],
      removed: [],
      failed: [],
      changedOutside: [],
    });
    expect(await readFile(t.file('a.txt'), 'utf8')).toBe('a changed twice');

    const back0 = await reopened.restoreTo(0);
    expect(back0).toEqual({
      restored: [t.file('a.txt')],
      removed: [t.file('sub/b.txt')],
      failed: [],
      changedOutside: [],
    });
    expect(await readFile(t.file('a.txt'), 'utf8')).toBe('a at first');
    expect((await stat(t.file('a.txt'))).mode & 0o777).toBe(0o640);
    expect(existsSync(t.file('sub/b.txt'))).toBe(false);
    // Forgotten once restored: a second rewind changes nothing.
    expect(await reopened.restoreTo(0)).toEqual({
      restored: [],
      removed: [],
      failed: [],
      changedOutside: [],
    });
    expect(reopened.entries).toEqual([]);
    expect(t.logged).toEqual([]);
  });

  it('after a conversation cut, later changes belong to the cut point', async () => {
    const t = await setup();
    await writeFile(t.file('a.txt'), 'start');
    const store = await t.open();
    await store.keep([t.file('a.txt')], 6);
    await writeFile(t.file('a.txt'), 'changed at 6');
    await store.conversationCut(2);
    expect(store.filesChangedSince(3)).toEqual([]);
    expect(store.filesChangedSince(2)).toEqual([t.file('a.txt')]);
    await store.restoreTo(2);
    expect(await readFile(t.file('a.txt'), 'utf8')).toBe('start');
  });

  it('skips directories and reports files too large to keep without touching them', async () => {
    const t = await setup();
    await mkdir(t.file('folder'));
    await writeFile(t.file('big.bin'), '');
    await truncate(t.file('big.bin'), 17 * 1024 * 1024);
    const store = await t.open();
    await store.keep([t.file('folder'), t.file('big.bin')], 0);
    expect(store.entries.map((entry) => entry.path)).toEqual([t.file('big.bin')]);
    await writeFile(t.file('big.bin'), 'small now');
    const outcome = await store.restoreTo(0);
    expect(outcome.failed).toEqual([
      { path: t.file('big.bin'), reason: 'it was too large to keep a copy' },
    ]);
    expect(await readFile(t.file('big.bin'), 'utf8')).toBe('small now');
  });

  describe('a tampered index never writes outside the workspace', () => {
    const cases: Array<[string, (t: Awaited<ReturnType<typeof setup>>) => string]> = [
      ['an absolute path elsewhere', (t) => join(t.outside, 'victim.txt')],
      ['a path climbing out with ..', (t) => `${t.workspace}/../outside/victim.txt`],
      ['the workspace itself', (t) => t.workspace],
      ['a sibling folder sharing the prefix', (t) => `${t.workspace}-evil/victim.txt`],
    ];
    it.each(cases)('%s', async (_name, target) => {
      const t = await setup();
      const victim = join(t.outside, 'victim.txt');
      await writeFile(victim, 'precious');
      await mkdir(t.storeDir, { recursive: true });
      const path = target(t);
      await writeFile(
        join(t.storeDir, 'index.json'),
        JSON.stringify({
          version: 1,
          entries: [{ path, prompt: 0, existed: false, timestamp: 0 }],
        }),
      );
      const outcome = await (await t.open()).restoreTo(0);
      expect(outcome.failed).toHaveLength(1);
      expect(outcome.failed[0]?.reason).toMatch(/outside the workspace/);
      expect(await readFile(victim, 'utf8')).toBe('precious');
    });

    it('a blob name that is not a hash', async () => {
      const t = await setup();
      await mkdir(t.storeDir, { recursive: true });
      await writeFile(join(t.outside, 'secret'), 'secret');
      await writeFile(
        join(t.storeDir, 'index.json'),
        JSON.stringify({
          version: 1,
          entries: [
            {
              path: t.file('a.txt'),
              prompt: 0,
              existed: true,
              blob: '../../outside/secret',
              timestamp: 0,
            },
          ],
        }),
      );
      const outcome = await (await t.open()).restoreTo(0);
      expect(outcome.failed).toEqual([{ path: t.file('a.txt'), reason: 'no copy was kept' }]);
      expect(existsSync(t.file('a.txt'))).toBe(false);
    });

    it('a folder of the path replaced by a link out of the workspace', async () => {
      const t = await setup();
      await mkdir(t.file('sub'));
      await writeFile(t.file('sub/a.txt'), 'original');
      const store = await t.open();
      await store.keep([t.file('sub/a.txt')], 0);
      await import('node:fs/promises').then(({ rm }) => rm(t.file('sub'), { recursive: true }));
      await symlink(t.outside, t.file('sub'));
      const outcome = await store.restoreTo(0);
      expect(outcome.failed[0]?.reason).toMatch(/outside the workspace/);
      expect(existsSync(join(t.outside, 'a.txt'))).toBe(false);
    });

    it('a link put where the file was is replaced, not written through', async () => {
      const t = await setup();
      await writeFile(t.file('a.txt'), 'original');
      const victim = join(t.outside, 'victim.txt');
      await writeFile(victim, 'precious');
      const store = await t.open();
      await store.keep([t.file('a.txt')], 0);
      await import('node:fs/promises').then(({ rm }) => rm(t.file('a.txt')));
      await symlink(victim, t.file('a.txt'));
      expect((await store.restoreTo(0)).restored).toEqual([t.file('a.txt')]);
      expect(await readFile(t.file('a.txt'), 'utf8')).toBe('original');
      expect(await readFile(victim, 'utf8')).toBe('precious');
    });
  });

  describe('links a command puts in the workspace never lead a rewind (or a checkpoint) outside', () => {
    // Each case: what the workspace held when the file was kept, and the link a sandboxed
    // command puts in place before the rewind. Nothing may appear, change or vanish outside.
    const cases: Array<
      [
        string,
        { file: string; link: string; target: (t: Awaited<ReturnType<typeof setup>>) => string },
      ]
    > = [
      [
        'a folder two levels up, the one below it missing outside',
        { file: 'sub/deeper/a.txt', link: 'sub', target: (t) => t.outside },
      ],
      [
        'a folder in the middle of the path',
        { file: 'a/b/c/a.txt', link: 'a/b', target: (t) => t.outside },
      ],
      ['a relative link', { file: 'sub/deeper/a.txt', link: 'sub', target: () => '../outside' }],
      [
        'a link to a link inside that leads out',
        { file: 'sub/deeper/a.txt', link: 'sub', target: () => 'hop' },
      ],
    ];
    it.each(cases)('%s', async (_name, { file, link, target }) => {
      const t = await setup();
      await mkdir(join(t.workspace, file, '..'), { recursive: true });
      await writeFile(t.file(file), 'planted by the repository');
      const store = await t.open();
      await store.keep([t.file(file), t.file(`${link}/created.txt`)], 0);
      // The command's move: the folder goes, a link out takes its place.
      await rm(t.file(link), { recursive: true });
      await symlink(t.outside, t.file('hop'));
      await symlink(target(t), t.file(link));
      await writeFile(join(t.outside, 'created.txt'), 'precious');
      const outcome = await store.restoreTo(0);
      expect(outcome.restored).toEqual([]);
      expect(outcome.failed.map((entry) => entry.path)).toContain(t.file(file));
      expect(outcome.failed.every((entry) => /outside the workspace/.test(entry.reason))).toBe(
        true,
      );
      expect(readdirSync(t.outside).sort()).toEqual(['created.txt']);
      expect(await readFile(join(t.outside, 'created.txt'), 'utf8')).toBe('precious');
    });

    it('a folder swapped for a link out and back, over and over, while rewinds run', async () => {
      const t = await setup();
      await mkdir(t.file('sub/deeper'), { recursive: true });
      await writeFile(t.file('sub/deeper/a.txt'), 'kept');
      const store = await t.open();
      await store.keep([t.file('sub/deeper/a.txt')], 0);
      // A real process flipping the folder as fast as it can (a background command would).
      const flipper = spawn(
        'sh',
        [
          '-c',
          'while :; do mv sub sub.real; ln -s "$1" sub; rm -f sub; mv sub.real sub; done 2>/dev/null',
          'flipper',
          t.outside,
        ],
        { cwd: t.workspace, stdio: 'ignore' },
      );
      const exited = new Promise((resolve) => flipper.once('exit', resolve));
      cleanups.push(async () => {
        flipper.kill('SIGKILL');
        await exited;
      });
      const outcomes: string[] = [];
      for (let round = 1; round <= 150; round++) {
        // Each round: the file changed for prompt `round`, then rewound to it.
        // A keep caught mid-swap may fail: the session carries on without it, as withCheckpoints does.
        await store.keep([t.file('sub/deeper/a.txt')], round).catch(() => undefined);
        const outcome = await store.restoreTo(round).catch(() => ({ restored: [] }));
        outcomes.push(outcome.restored.length > 0 ? 'restored' : 'refused');
      }
      flipper.kill('SIGKILL');
      await exited;
      expect(readdirSync(t.outside)).toEqual([]);
      // The rounds did run (some may be refused while the link is there).
      expect(outcomes).toHaveLength(150);
    });

    it('keeps no copy of a file that a link in its path places outside', async () => {
      const t = await setup();
      await writeFile(join(t.outside, 'id_ed25519'), 'PRIVATE KEY');
      await symlink(t.outside, t.file('keys'));
      const store = await t.open();
      await store.keep([t.file('keys/id_ed25519'), join(t.outside, 'id_ed25519')], 0);
      expect(store.entries).toEqual([]);
      const blobs = join(t.storeDir, 'blobs');
      expect(existsSync(blobs) ? readdirSync(blobs) : []).toEqual([]);
    });
  });

  it('an unreadable index is reported and the store starts afresh', async () => {
    const t = await setup();
    await mkdir(t.storeDir, { recursive: true });
    await writeFile(join(t.storeDir, 'index.json'), '{ not json');
    const store = await t.open();
    expect(store.entries).toEqual([]);
    expect(t.logged[0]).toMatch(/checkpoints in .* are unreadable/);
  });
});

describe('withCheckpoints', () => {
  const context = (): ToolContext =>
    ({
      toolCallId: 'c',
      toolName: 't',
      signal: new AbortController().signal,
      onUpdate: () => undefined,
      onProgress: () => undefined,
    }) as unknown as ToolContext;

  it('keeps the files a writing tool names before it runs, under the current prompt; other tools are untouched', async () => {
    const t = await setup();
    await writeFile(t.file('a.txt'), 'before');
    const store = await t.open();
    const writer = defineTool({
      name: 'writer',
      description: 'w',
      input: z.object({ path: z.string() }),
      policy: { pathAccess: 'write', permission: 'workspace-write' },
      permissionSubjects: (args) => [join(t.workspace, args.path)],
      execute: async (args) => {
        await writeFile(join(t.workspace, args.path), 'after');
        return 'written';
      },
    });
    const reader = defineTool({
      name: 'reader',
      description: 'r',
      input: z.object({ path: z.string() }),
      policy: { pathAccess: 'read', permission: 'read-only' },
      permissionSubjects: (args) => [join(t.workspace, args.path)],
      execute: async () => 'read',
    });
    const messages: Message[] = [userMessage('first'), userMessage('second')];
    const [wrappedWriter, wrappedReader] = withCheckpoints([writer, reader], () => ({
      store,
      messages,
    }));
    expect(wrappedReader).toBe(reader);
    expect(wrappedWriter).not.toBe(writer);
    expect(wrappedWriter?.name).toBe('writer');
    await wrappedWriter?.execute({ path: 'a.txt' }, context());
    expect(store.entries).toMatchObject([{ path: t.file('a.txt'), prompt: 1, existed: true }]);
    await store.restoreTo(1);
    expect(await readFile(t.file('a.txt'), 'utf8')).toBe('before');
  });

  it('currentPrompt is the last user message', () => {
    expect(currentPrompt([])).toBe(0);
    expect(
      currentPrompt([
        userMessage('a'),
        {
          role: 'toolResult',
          toolCallId: 'x',
          toolName: 'y',
          content: [],
          isError: false,
          timestamp: 0,
        },
        userMessage('b'),
        {
          role: 'toolResult',
          toolCallId: 'x',
          toolName: 'y',
          content: [],
          isError: false,
          timestamp: 0,
        },
      ]),
    ).toBe(2);
  });
});

describe('pruneCheckpoints', () => {
  it('removes the checkpoints of sessions not written within the retention, and keeps the rest', async () => {
    const dir = await tempDir('agent-cli-checkpoints-prune-');
    cleanups.push(dir.dispose);
    const { utimes } = await import('node:fs/promises');
    for (const name of ['old', 'fresh']) {
      await mkdir(join(dir.path, 'checkpoints', name), { recursive: true });
      await writeFile(join(dir.path, 'checkpoints', name, 'index.json'), '{}');
    }
    const longAgo = new Date(Date.now() - 40 * 24 * 60 * 60 * 1000);
    await utimes(join(dir.path, 'checkpoints', 'old', 'index.json'), longAgo, longAgo);
    expect(await pruneCheckpoints(30, { home: dir.path })).toBe(1);
    expect(existsSync(join(dir.path, 'checkpoints', 'old'))).toBe(false);
    expect(existsSync(join(dir.path, 'checkpoints', 'fresh'))).toBe(true);
  });
});
