// A rewind after a file was changed outside the file tools (by the user's editor, bash, git…)
// since the agent last wrote it: the rewind used to put the old copy over it (or remove a created
// file) without a word, losing that work. Now nothing is put back and the files are named;
// `force` overwrites them.

import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defineTool, type Message, type ToolContext, userMessage } from '@agent/core';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { tempDir } from '../testing/test-support.js';
import { CheckpointStore, withCheckpoints } from './checkpoints.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const context = () =>
  ({
    toolCallId: 'c',
    toolName: 'writer',
    signal: new AbortController().signal,
    onUpdate: () => undefined,
    onProgress: () => undefined,
  }) as unknown as ToolContext;

/** A workspace, a store, and a file tool that writes `content` to `path` through the checkpoints. */
async function setup() {
  const dir = await tempDir('agent-cli-checkpoints-outside-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  await mkdir(workspace);
  const storeDir = join(dir.path, 'store');
  const open = () => CheckpointStore.open({ dir: storeDir, workspace, log: () => undefined });
  const store = await open();
  const file = (name: string) => join(workspace, name);
  const messages: Message[] = [userMessage('first')];
  const writer = defineTool({
    name: 'writer',
    description: 'w',
    input: z.object({ path: z.string(), content: z.string() }),
    policy: { pathAccess: 'write', permission: 'workspace-write' },
    permissionSubjects: (args) => [file(args.path)],
    execute: async (args) => {
      await mkdir(join(file(args.path), '..'), { recursive: true });
      await writeFile(file(args.path), args.content);
      return 'written';
    },
  });
  let current = store;
  const [wrapped] = withCheckpoints([writer], () => ({ store: current, messages }));
  const agentWrites = async (path: string, content: string) => {
    await wrapped?.execute({ path, content }, context());
  };
  const reopen = async () => {
    current = await open();
    return current;
  };
  return { workspace, file, messages, agentWrites, store: () => current, reopen };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** Ways a file the agent wrote is changed afterwards by someone else. */
const outsideChanges: [string, (t: Setup, name: string) => Promise<void>][] = [
  ['edited by the user', (t, name) => writeFile(t.file(name), 'the user typed this\n')],
  ['appended to', (t, name) => writeFile(t.file(name), 'more\n', { flag: 'a' })],
  ['emptied', (t, name) => writeFile(t.file(name), '')],
  ['deleted', (t, name) => rm(t.file(name))],
  [
    'replaced by a link',
    async (t, name) => {
      await rm(t.file(name));
      await writeFile(t.file('elsewhere.txt'), 'x');
      await symlink(t.file('elsewhere.txt'), t.file(name));
    },
  ],
  [
    'same length, one byte changed',
    async (t, name) => {
      const text = await readFile(t.file(name), 'utf8');
      await writeFile(t.file(name), `${text.slice(0, -2)}X\n`);
    },
  ],
];

describe('a rewind over a file changed outside the file tools since', () => {
  describe.each(outsideChanges)('a changed file %s', (_how, change) => {
    it('is not overwritten: nothing is put back, the file is named; force puts it back', async () => {
      const t = await setup();
      await writeFile(t.file('a.txt'), 'original\n');
      await writeFile(t.file('b.txt'), 'b original\n');
      await t.agentWrites('a.txt', 'by the agent\n');
      await t.agentWrites('b.txt', 'b by the agent\n');
      await change(t, 'a.txt');
      const before = existsSync(t.file('a.txt')) ? await readFile(t.file('a.txt')) : undefined;

      // Reopened: what the agent wrote is known to the next process too (--resume).
      const store = await t.reopen();
      const refused = await store.restoreTo(0);
      expect(refused).toMatchObject({ restored: [], removed: [], failed: [] });
      expect(refused.changedOutside).toEqual([t.file('a.txt')]);
      // Neither file was touched: the rewind is all or nothing.
      const after = existsSync(t.file('a.txt')) ? await readFile(t.file('a.txt')) : undefined;
      expect(after).toEqual(before);
      expect(await readFile(t.file('b.txt'), 'utf8')).toBe('b by the agent\n');
      expect(store.filesChangedSince(0)).toEqual([t.file('a.txt'), t.file('b.txt')]);

      const forced = await store.restoreTo(0, { force: true });
      expect(forced).toMatchObject({ changedOutside: [], failed: [] });
      expect(forced.restored.sort()).toEqual([t.file('a.txt'), t.file('b.txt')]);
      expect(await readFile(t.file('a.txt'), 'utf8')).toBe('original\n');
      expect(await readFile(t.file('b.txt'), 'utf8')).toBe('b original\n');
    });
  });

  it.each(outsideChanges.filter(([how]) => how !== 'deleted'))(
    'a file the agent created and that was then %s is not removed',
    async (_how, change) => {
      const t = await setup();
      await t.agentWrites('sub/new.txt', 'created by the agent\n');
      await change(t, 'sub/new.txt');
      const refused = await t.store().restoreTo(0);
      expect(refused.changedOutside).toEqual([t.file('sub/new.txt')]);
      expect(refused.removed).toEqual([]);
      expect(existsSync(t.file('sub/new.txt'))).toBe(true);
    },
  );

  it('a file a call named but did not write, made outside afterwards, is not removed', async () => {
    const t = await setup();
    // The agent's call named the file but failed before writing it.
    const store = t.store();
    await store.keep([t.file('late.txt')], 0);
    await store.recordWritten([t.file('late.txt')]);
    await writeFile(t.file('late.txt'), 'made by the user later\n');
    const refused = await store.restoreTo(0);
    expect(refused.changedOutside).toEqual([t.file('late.txt')]);
    expect(await readFile(t.file('late.txt'), 'utf8')).toBe('made by the user later\n');
  });

  it('files left as the agent wrote them are put back without a question', async () => {
    const t = await setup();
    await writeFile(t.file('a.txt'), 'original\n');
    await chmod(t.file('a.txt'), 0o640);
    await t.agentWrites('a.txt', 'one\n');
    t.messages.push(userMessage('second'));
    await t.agentWrites('a.txt', 'two\n');
    await t.agentWrites('c.txt', 'created\n');
    // A mode change alone is not a change of content.
    await chmod(t.file('a.txt'), 0o600);
    const back1 = await t.store().restoreTo(1);
    expect(back1).toMatchObject({ restored: [t.file('a.txt')], removed: [t.file('c.txt')] });
    expect(back1.changedOutside).toEqual([]);
    expect(await readFile(t.file('a.txt'), 'utf8')).toBe('one\n');
    // The restored content is now what the rewind wrote, not a change from outside.
    const back0 = await t.store().restoreTo(0);
    expect(back0.changedOutside).toEqual([]);
    expect(await readFile(t.file('a.txt'), 'utf8')).toBe('original\n');
    expect((await stat(t.file('a.txt'))).mode & 0o777).toBe(0o640);
  });

  it('a change outside to a file changed only after the rewind point does not block an earlier file', async () => {
    const t = await setup();
    await t.agentWrites('a.txt', 'prompt 0\n');
    t.messages.push(userMessage('second'));
    await t.agentWrites('b.txt', 'prompt 1\n');
    await writeFile(t.file('a.txt'), 'user edit of a\n');
    // Rewinding to prompt 1 only puts b.txt back: a.txt's change does not matter.
    const back1 = await t.store().restoreTo(1);
    expect(back1).toMatchObject({ removed: [t.file('b.txt')], changedOutside: [] });
    expect(await readFile(t.file('a.txt'), 'utf8')).toBe('user edit of a\n');
  });
});

describe('a change from outside between two of the agent’s changes', () => {
  it('between two prompts: a rewind past it is refused, one after it is not', async () => {
    const t = await setup();
    await writeFile(t.file('a.txt'), 'original\n');
    await t.agentWrites('a.txt', 'agent, prompt 0\n');
    await writeFile(t.file('a.txt'), 'the user edited\n');
    t.messages.push(userMessage('second'));
    await t.agentWrites('a.txt', 'agent, prompt 1\n');
    // Back to before prompt 1: the user's edit is what comes back.
    const store = await t.reopen();
    const back1 = await store.restoreTo(1);
    expect(back1).toMatchObject({ restored: [t.file('a.txt')], changedOutside: [] });
    expect(await readFile(t.file('a.txt'), 'utf8')).toBe('the user edited\n');
    // Back to before prompt 0 would lose it: refused, then forced.
    await t.agentWrites('a.txt', 'agent, prompt 1 again\n');
    expect((await t.store().restoreTo(0)).changedOutside).toEqual([t.file('a.txt')]);
    expect(await readFile(t.file('a.txt'), 'utf8')).toBe('agent, prompt 1 again\n');
    await t.store().restoreTo(0, { force: true });
    expect(await readFile(t.file('a.txt'), 'utf8')).toBe('original\n');
  });

  it('within one prompt: a rewind to that prompt is refused', async () => {
    const t = await setup();
    await writeFile(t.file('a.txt'), 'original\n');
    await t.agentWrites('a.txt', 'first change\n');
    await writeFile(t.file('a.txt'), 'bash or the user changed it\n');
    await t.agentWrites('a.txt', 'second change\n');
    const refused = await (await t.reopen()).restoreTo(0);
    expect(refused.changedOutside).toEqual([t.file('a.txt')]);
    expect(await readFile(t.file('a.txt'), 'utf8')).toBe('second change\n');
  });
});
