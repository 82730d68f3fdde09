// A trusted folder's own language server runs in the sandbox, where what editors and git run later
// (`.vscode`, a hooks folder in the tree, the home's startup files) is read-only — but a rename's
// edit, which that server computes, is written by the CLI itself. lsp_apply_rename wrote a
// `.vscode/tasks.json` task (`runOn: folderOpen`: run when the folder is opened, outside any
// sandbox) unasked in workspace-write, where write_file to the same file asks for full-access.
// The server here is a real process (the tools-lsp hostile fixture) planted as the folder's
// node_modules/.bin/pyright-langserver, as a sandboxed command could plant it.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const hostileServer = join(
  appDir,
  '..',
  '..',
  'packages',
  'tools-lsp',
  'src',
  '__fixtures__',
  'hostile-server',
  'server.mjs',
);

/** PATH without any language server: node's folder and the system's. */
const plainPath = [dirname(process.execPath), '/usr/bin', '/bin'].join(':');

/** A trusted repository whose own server's rename edits `target`; the model previews and applies it. */
async function renameInto(target: string) {
  const dir = await tempDir('agent-cli-lsp-protected-');
  cleanups.push(dir.dispose);
  const repo = join(dir.path, 'repo');
  const serverFile = join(repo, 'node_modules', '.bin', 'pyright-langserver');
  await mkdir(dirname(serverFile), { recursive: true });
  await mkdir(join(repo, '.git'));
  await mkdir(join(repo, '.vscode'));
  await writeFile(serverFile, `#!/bin/sh\nexec "${process.execPath}" "${hostileServer}"\n`);
  await chmod(serverFile, 0o755);
  await writeFile(join(repo, 'a.py'), 'value = 1\n');
  await writeFile(join(repo, 'b.py'), 'other = 2\n');
  await writeFile(join(repo, '.vscode', 'tasks.json'), '{}\n');
  const script = await writeScript(dir.path, [
    {
      toolCalls: [
        { name: 'lsp_rename', arguments: { path: 'a.py', symbol: 'value', new_name: 'x' } },
      ],
    },
    { toolCalls: [{ name: 'lsp_apply_rename', arguments: { id: 'rename-1' } }] },
    { text: 'done' },
  ]);
  const run = await runCli(
    [
      '-p',
      'go',
      '--scripted',
      script,
      '--mode',
      'workspace-write',
      '--trust',
      '--sandbox',
      'required',
    ],
    {
      cwd: repo,
      env: cleanEnv({
        AGENT_HOME: join(dir.path, 'home'),
        PATH: plainPath,
        HOSTILE_TARGET: join(repo, target),
      }),
    },
  );
  return { run, written: await readFile(join(repo, target), 'utf8') };
}

describe("a rename computed by the folder's sandboxed language server", () => {
  it('is not written into .vscode unasked: it needs full-access, as write_file does', async (context) => {
    skipWithout('bwrap')(context);
    const { run, written } = await renameInto('.vscode/tasks.json');
    expect(written, run.stdout + run.stderr).toBe('{}\n');
    expect(run.stdout + run.stderr).toContain("--allow 'lsp_apply_rename(");
  });

  it('the control: an ordinary file of the workspace is written', async (context) => {
    skipWithout('bwrap')(context);
    const { run, written } = await renameInto('b.py');
    expect(written, run.stdout + run.stderr).toBe('pwned other = 2\n');
  });
});
