// A rename's edit is checked (its files inside the roots, unchanged since the preview) and then
// written by this process. A command of the model's running in the background (sandboxed: it can
// write only the workspace) swaps a folder of the workspace for a link out again and again; a
// write that followed the link between the check and the rename replaced the file of the same
// name outside — here `outside/notes.hx`, a stand-in for `~/.bashrc` or `.git/config`. The racer
// is a real process exchanging the folder and the link with renameat2(RENAME_EXCHANGE).
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { type AnyAgentTool, executeTool } from '@agent/core';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, describe, expect, it } from 'vitest';
import { createLspTools } from './lsp-tools.js';
import { LspWorkspace } from './lsp-workspace.js';
import { hostileServerConfig, toolNamed } from './test-helpers.js';

/** Exchanges argv[1] and argv[2] (renameat2, RENAME_EXCHANGE) until killed. */
const racer =
  'import ctypes, sys\nlibc = ctypes.CDLL(None, use_errno=True)\na, b = sys.argv[1].encode(), sys.argv[2].encode()\nwhile True: libc.renameat2(-100, a, -100, b, 2)\n';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const original = 'outside = 1;\n';

async function setup() {
  const parent = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'agent-lsp-races-')));
  cleanups.push(() => fs.rm(parent, { recursive: true, force: true }));
  const workspace = path.join(parent, 'ws');
  const outside = path.join(parent, 'outside');
  await fs.mkdir(path.join(workspace, 'sub'), { recursive: true });
  await fs.mkdir(outside);
  await fs.writeFile(path.join(workspace, 'main.hx'), 'let value = 1;\n');
  await fs.writeFile(path.join(workspace, 'sub', 'notes.hx'), 'inside = 1;\n');
  await fs.writeFile(path.join(outside, 'notes.hx'), original);
  await fs.symlink(outside, path.join(workspace, 'link'));
  const lsp = new LspWorkspace({
    cwd: workspace,
    servers: [hostileServerConfig],
    env: { ...process.env, HOSTILE_TARGET: path.join(workspace, 'sub', 'notes.hx') },
  });
  cleanups.push(() => lsp.close());
  const tools = createLspTools({ workspace: lsp });
  const tool = (name: string): AnyAgentTool => toolNamed(tools, name);
  return { workspace, outside, tool };
}

function startRacer(cwd: string): ChildProcess {
  const child = spawn('python3', ['-c', racer, 'sub', 'link'], { cwd, stdio: 'ignore' });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((done) => child.once('exit', done));
      child.kill('SIGKILL');
      await gone;
    }
  });
  return child;
}

describe('a rename applied while a folder is swapped for a link out', () => {
  it('never writes outside the workspace', async (context) => {
    skipWithout('python3')(context);
    const t = await setup();
    startRacer(t.workspace);
    let applied = 0;
    let previewed = 0;
    for (let round = 0; round < 400; round += 1) {
      const preview = await executeTool(t.tool('lsp_rename'), {
        path: 'main.hx',
        symbol: 'value',
        new_name: 'other',
      });
      const id = (preview.details as { id?: unknown } | undefined)?.id;
      if (preview.isError || typeof id !== 'string') continue;
      previewed += 1;
      const apply = await executeTool(t.tool('lsp_apply_rename'), { id });
      if (!apply.isError) applied += 1;
      if ((await fs.readFile(path.join(t.outside, 'notes.hx'), 'utf8')) !== original) break;
    }
    expect(await fs.readFile(path.join(t.outside, 'notes.hx'), 'utf8')).toBe(original);
    // The race was run: previews were made and some writes went through where they belong.
    expect(previewed).toBeGreaterThan(0);
    expect(applied).toBeGreaterThan(0);
    // No temporary file was left outside either.
    expect(await fs.readdir(t.outside)).toEqual(['notes.hx']);
  });
});
