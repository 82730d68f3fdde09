/**
 * The file tools write from the agent's own process, outside the sandbox, into a workspace that
 * sandboxed commands (a background one, still running) may change at any moment. Between the
 * checks of a write and its last step a command can swap what a path leads to:
 *
 * - a parent folder for a link into `.git` (or a startup file's folder), after the execute-time
 *   check that the write plants nothing: the temp file was made in `.git`, the only check left
 *   (inside the roots, not hidden) passed, and `.git/config` was replaced — a `core.fsmonitor`
 *   run by the user's next `git status`, written without the `full-access` question;
 * - the temp file for a link to any file, once written and closed: `chmod(temp)` followed the
 *   link and gave that file — outside every root, `/etc/passwd` for an agent run by root — the
 *   mode of the file being replaced, which the command chose (`chmod 666` inside the sandbox).
 *
 * Each test swaps at one step of the write through a file-system wrapper (the step is named, the
 * timing exact) and checks where the write landed.
 */
import * as fs from 'node:fs';
import * as fsPromises from 'node:fs/promises';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEditFileTool } from './edit-file.js';
import { makeTempDir, swapBeforeOpen, testContext } from './test-helpers.js';
import type { FileSystemOperations } from './workspace.js';
import { createWriteFileTool } from './write-file.js';

function repository() {
  const work = makeTempDir();
  fs.mkdirSync(path.join(work, '.git', 'hooks'), { recursive: true });
  fs.writeFileSync(path.join(work, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  fs.writeFileSync(path.join(work, '.git', 'config'), '[core]\n\tbare = false\n');
  fs.mkdirSync(path.join(work, 'sub'));
  fs.writeFileSync(path.join(work, 'sub', 'config'), '[core]\n');
  return work;
}

/**
 * Node's fs, except that `race(path)` runs once, right after the first temp file (`*.tmp`) opened
 * is written (`after: 'write'`) or closed (`after: 'close'`).
 */
function swapTemp(after: 'write' | 'close', race: (temp: string) => void): FileSystemOperations {
  let raced = false;
  const open = (async (...args: Parameters<typeof fsPromises.open>) => {
    const handle = await fsPromises.open(...args);
    const name = String(args[0]);
    if (raced || !name.endsWith('.tmp')) return handle;
    raced = true;
    const step = after === 'write' ? 'writeFile' : 'close';
    const original = handle[step].bind(handle) as (...stepArgs: unknown[]) => Promise<void>;
    handle[step] = (async (...stepArgs: unknown[]) => {
      await original(...stepArgs);
      race(name);
    }) as never;
    return handle;
  }) as typeof fsPromises.open;
  return { ...fsPromises, open };
}

const planted = '[core]\n\tfsmonitor = "touch PWNED"\n';

describe('a parent folder swapped for a link into .git after the write was checked', () => {
  const intoGit = (work: string) => () => {
    fs.renameSync(path.join(work, 'sub'), path.join(work, 'sub-moved'));
    fs.symlinkSync('.git', path.join(work, 'sub'));
  };

  it('write_file is refused and .git/config is untouched', async () => {
    const work = repository();
    const write = createWriteFileTool({ cwd: work, fs: swapBeforeOpen('.tmp', intoGit(work)) });
    await expect(
      write.execute({ path: 'sub/config', content: planted }, testContext()),
    ).rejects.toMatchObject({ kind: 'denied' });
    expect(fs.readFileSync(path.join(work, '.git', 'config'), 'utf8')).not.toContain('PWNED');
    expect(fs.readdirSync(path.join(work, '.git')).sort()).toEqual(['HEAD', 'config', 'hooks']);
  });

  it('edit_file is refused and .git/config is untouched', async () => {
    const work = repository();
    // The same content in both files, so that the edit's own re-read finds what it read.
    fs.writeFileSync(path.join(work, '.git', 'config'), '[core]\n');
    const edit = createEditFileTool({ cwd: work, fs: swapBeforeOpen('.tmp', intoGit(work)) });
    await expect(
      edit.execute(
        { path: 'sub/config', old_string: '[core]\n', new_string: planted },
        testContext(),
      ),
    ).rejects.toMatchObject({ kind: 'denied' });
    expect(fs.readFileSync(path.join(work, '.git', 'config'), 'utf8')).toBe('[core]\n');
  });

  it('a link swapped in to an ordinary folder of the workspace is still written through', async () => {
    const work = repository();
    fs.mkdirSync(path.join(work, 'other'));
    const write = createWriteFileTool({
      cwd: work,
      fs: swapBeforeOpen('.tmp', () => {
        fs.renameSync(path.join(work, 'sub'), path.join(work, 'sub-moved'));
        fs.symlinkSync('other', path.join(work, 'sub'));
      }),
    });
    await write.execute({ path: 'sub/config', content: 'x' }, testContext());
    expect(fs.readFileSync(path.join(work, 'other', 'config'), 'utf8')).toBe('x');
  });
});

describe('the temp file swapped for a link once it is written', () => {
  function setup() {
    const work = repository();
    const outside = path.join(makeTempDir(), 'passwd');
    fs.writeFileSync(outside, 'root:x:0:0::/root:/bin/bash\n');
    fs.chmodSync(outside, 0o644);
    // The command made the file it will have the agent replace world-writable.
    fs.chmodSync(path.join(work, 'sub', 'config'), 0o666);
    const toOutside = (temp: string) => {
      fs.unlinkSync(temp);
      fs.symlinkSync(outside, temp);
    };
    return { work, outside, toOutside };
  }

  it('before it is closed: the write is refused, the linked file outside keeps its mode', async () => {
    const { work, outside, toOutside } = setup();
    const write = createWriteFileTool({ cwd: work, fs: swapTemp('write', toOutside) });
    await expect(
      write.execute({ path: 'sub/config', content: 'new\n' }, testContext()),
    ).rejects.toMatchObject({ kind: 'denied' });
    expect(fs.statSync(outside).mode & 0o7777).toBe(0o644);
    expect(fs.readFileSync(outside, 'utf8')).toBe('root:x:0:0::/root:/bin/bash\n');
    expect(fs.readFileSync(path.join(work, 'sub', 'config'), 'utf8')).toBe('[core]\n');
  });

  it('after it is closed: the linked file outside keeps its mode and content', async () => {
    const { work, outside, toOutside } = setup();
    const write = createWriteFileTool({ cwd: work, fs: swapTemp('close', toOutside) });
    // The rename then moves the command's link into the workspace: a link it could have made
    // there itself. What matters is that nothing outside changed.
    await write.execute({ path: 'sub/config', content: 'new\n' }, testContext()).catch(() => {});
    expect(fs.statSync(outside).mode & 0o7777).toBe(0o644);
    expect(fs.readFileSync(outside, 'utf8')).toBe('root:x:0:0::/root:/bin/bash\n');
  });

  it('without a swap the replaced file keeps its exact mode', async () => {
    const work = repository();
    fs.chmodSync(path.join(work, 'sub', 'config'), 0o751);
    const write = createWriteFileTool({ cwd: work });
    await write.execute({ path: 'sub/config', content: 'new\n' }, testContext());
    expect(fs.statSync(path.join(work, 'sub', 'config')).mode & 0o7777).toBe(0o751);
  });
});
