import * as fs from 'node:fs';
import * as path from 'node:path';
import { type AnyAgentTool, ToolError } from '@agent/core';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEditFileTool, createTextEditorTool } from './edit-file.js';
import { createGlobTool } from './glob.js';
import { createListFilesTool } from './list-files.js';
import { createReadFileTool } from './read-file.js';
import { createSearchTool } from './search.js';
import { makeTempDir, resultText, testContext } from './test-helpers.js';
import { createWriteFileTool } from './write-file.js';

let dir: string;
beforeEach(() => {
  dir = makeTempDir();
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Every file tool, with arguments that make it touch `target`. */
function calls(target: string): [string, AnyAgentTool, Record<string, unknown>][] {
  const where = { cwd: dir };
  return [
    ['read_file', createReadFileTool(where), { path: target }],
    ['write_file', createWriteFileTool(where), { path: target, content: 'x' }],
    ['edit_file', createEditFileTool(where), { path: target, old_string: 'a', new_string: 'b' }],
    [
      'text_editor',
      createTextEditorTool(where),
      { command: 'append', path: target, new_str: 'more' },
    ],
    ['list_files', createListFilesTool(where), { path: target }],
    ['glob', createGlobTool(where), { pattern: '*', path: target }],
    [
      'search',
      createSearchTool({ ...where, engine: 'typescript' }),
      { pattern: 'x', path: target },
    ],
  ];
}

/** The error `promise` rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

const root = typeof process.getuid === 'function' && process.getuid() === 0;
/** Root bypasses permission bits: drop to `nobody` (euid/egid 65534) with seteuid, if possible. */
const canLosePermissions = !root || typeof process.seteuid === 'function';

async function withoutRoot<T>(run: () => Promise<T>): Promise<T> {
  if (!root) return run();
  process.setegid?.(65534);
  process.seteuid?.(65534);
  try {
    return await run();
  } finally {
    process.seteuid?.(0);
    process.setegid?.(0);
  }
}

describe('file-system errors', () => {
  it('reports a symlink loop (ELOOP) as a ToolError naming the path, from every file tool', async () => {
    fs.symlinkSync('loop-b', path.join(dir, 'loop-a'));
    fs.symlinkSync('loop-a', path.join(dir, 'loop-b'));
    for (const target of ['loop-a', 'loop-a/inside.txt']) {
      for (const [name, tool, args] of calls(target)) {
        const error = await rejection(tool.execute(args, testContext({ toolName: name })));
        expect(ToolError.isInstance(error), `${name} ${target}: ${String(error)}`).toBe(true);
        expect((error as ToolError).message).toContain(target);
        expect((error as ToolError).message).toMatch(/symbolic links/);
        expect((error as ToolError).message).toContain('(ELOOP)');
      }
    }
  });

  it('reports an over-long name (ENAMETOOLONG) as a ToolError naming the path', async () => {
    const long = `${'n'.repeat(300)}.txt`;
    for (const [name, tool, args] of calls(long)) {
      const error = await rejection(tool.execute(args, testContext({ toolName: name })));
      expect(ToolError.isInstance(error), `${name}: ${String(error)}`).toBe(true);
      expect((error as ToolError).message).toContain(long);
      expect((error as ToolError).message).toContain('too long (ENAMETOOLONG)');
    }
  });

  // Tests run as root here, which ignores permission bits: the test drops to uid/gid 65534 with
  // seteuid for the calls (a real EACCES from the kernel, no mock). Skipped only when running as
  // root where seteuid is unavailable (worker threads).
  it.skipIf(!canLosePermissions)(
    'reports EACCES as a ToolError naming the path (opening a file, resolving through a locked directory)',
    async () => {
      fs.chmodSync(dir, 0o755);
      fs.writeFileSync(path.join(dir, 'secret.txt'), 'a secret\n', { mode: 0o600 });
      fs.mkdirSync(path.join(dir, 'locked'), { mode: 0o700 });
      fs.writeFileSync(path.join(dir, 'locked', 'inner.txt'), 'a\n');
      const where = { cwd: dir };
      const errors = await withoutRoot(async () => ({
        read: await rejection(
          createReadFileTool(where).execute({ path: 'secret.txt' }, testContext()),
        ),
        edit: await rejection(
          createEditFileTool(where).execute(
            { path: 'secret.txt', old_string: 'secret', new_string: 'public' },
            testContext(),
          ),
        ),
        inner: await rejection(
          createReadFileTool(where).execute({ path: 'locked/inner.txt' }, testContext()),
        ),
        write: await rejection(
          createWriteFileTool(where).execute(
            { path: 'locked/new.txt', content: 'x' },
            testContext(),
          ),
        ),
        // An unreadable directory is an error, not an empty listing or "no matches".
        list: await rejection(
          createListFilesTool(where).execute({ path: 'locked' }, testContext()),
        ),
        glob: await rejection(
          createGlobTool(where).execute({ pattern: '*', path: 'locked' }, testContext()),
        ),
        search: await rejection(
          createSearchTool({ ...where, engine: 'typescript' }).execute(
            { pattern: 'a', path: 'locked' },
            testContext(),
          ),
        ),
        searchFile: await rejection(
          createSearchTool({ ...where, engine: 'typescript' }).execute(
            { pattern: 'a', path: 'secret.txt' },
            testContext(),
          ),
        ),
      }));
      for (const [what, error] of Object.entries(errors)) {
        expect(ToolError.isInstance(error), `${what}: ${String(error)}`).toBe(true);
        expect((error as ToolError).message, what).toContain(
          'permission denied by the file system (EACCES)',
        );
      }
      expect((errors.read as ToolError).message).toContain('Cannot open secret.txt');
      expect((errors.edit as ToolError).message).toContain('Cannot open secret.txt');
      expect((errors.inner as ToolError).message).toContain('locked/inner.txt');
      expect((errors.write as ToolError).message).toContain('locked/new.txt');
      expect((errors.list as ToolError).message).toContain('Cannot list locked');
      expect((errors.glob as ToolError).message).toContain('Cannot search locked');
      expect((errors.search as ToolError).message).toContain('Cannot search locked');
      expect((errors.searchFile as ToolError).message).toContain('Cannot search secret.txt');
      expect(fs.readFileSync(path.join(dir, 'secret.txt'), 'utf8')).toBe('a secret\n');
      expect(fs.existsSync(path.join(dir, 'locked', 'new.txt'))).toBe(false);
    },
  );

  // ripgrep exits with code 2 when it met any I/O error, even with matches: an unreadable file in
  // the tree must not fail the whole search (the TypeScript engine skips it; output stays the same).
  it.skipIf(!canLosePermissions)(
    'skips unreadable files and directories in a search with either engine, with the same output',
    async (context) => {
      skipWithout('rg')(context);
      fs.chmodSync(dir, 0o755);
      fs.writeFileSync(path.join(dir, 'open.txt'), 'needle here\n', { mode: 0o644 });
      fs.writeFileSync(path.join(dir, 'secret.txt'), 'needle hidden\n', { mode: 0o600 });
      fs.mkdirSync(path.join(dir, 'locked'), { mode: 0o700 });
      fs.writeFileSync(path.join(dir, 'locked', 'inner.txt'), 'needle inside\n');
      const outputs = await withoutRoot(async () => {
        const texts: string[] = [];
        for (const engine of ['ripgrep', 'typescript'] as const) {
          const search = createSearchTool({ cwd: dir, engine });
          texts.push(resultText(await search.execute({ pattern: 'needle' }, testContext())));
        }
        return texts;
      });
      expect(outputs[0]).toContain('open.txt:1:needle here');
      expect(outputs[0]).not.toContain('hidden');
      expect(outputs[0]).not.toContain('inside');
      expect(outputs[1]).toBe(outputs[0]);
    },
  );
});
