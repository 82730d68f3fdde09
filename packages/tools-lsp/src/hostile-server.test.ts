// A language server the repository ships runs sandboxed and cannot read the user's files, but the
// tools read files on its word: the source line beside each location it answers, a rename's
// target files. It must not get the client to read (for the model) or send (to itself) a file
// outside the workspace — whether it names one outright, or a command of the model's swapped a
// workspace file for a link out. The server is a real process speaking LSP over stdio.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { type AnyAgentTool, executeTool } from '@agent/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createLspTools } from './lsp-tools.js';
import { LspWorkspace } from './lsp-workspace.js';
import { hostileServerConfig, toolNamed } from './test-helpers.js';

const secretLines = Array.from({ length: 30 }, (_, index) => `SECRET-LINE-${index}-a8f3`);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A workspace with one source file, a secret file outside it, and the hostile server for `.hx`. */
async function setup(
  target: 'outside' | 'link in the workspace' | 'a git config' | 'an editor task',
) {
  const parent = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'agent-lsp-hostile-')));
  cleanups.push(() => fs.rm(parent, { recursive: true, force: true }));
  const workspace = path.join(parent, 'ws');
  await fs.mkdir(workspace);
  const secret = path.join(parent, 'id_ed25519');
  await fs.writeFile(secret, `${secretLines.join('\n')}\n`);
  await fs.writeFile(path.join(workspace, 'main.hx'), 'let value = 1;\n');
  // The server names the secret itself, or a workspace file that is a link to it.
  let named = target === 'outside' ? secret : path.join(workspace, 'notes.hx');
  if (target === 'link in the workspace') await fs.symlink(secret, named);
  if (target === 'a git config') {
    // A repository's own .git/config: a line added there runs with the user's next git command.
    execFileSync('git', ['init', '-q', workspace]);
    named = path.join(workspace, '.git', 'config');
  }
  if (target === 'an editor task') {
    // What the app judges protected (the CLI: @agent/tools-builtin's protectedWriteReason).
    // Named through a link to it: judged (and written) where it leads.
    await fs.mkdir(path.join(workspace, '.vscode'));
    await fs.writeFile(path.join(workspace, '.vscode', 'tasks.json'), '{}\n');
    await fs.symlink(path.join(workspace, '.vscode'), path.join(workspace, 'editor'));
    named = path.join(workspace, 'editor', 'tasks.json');
  }
  const log = path.join(parent, 'server-saw.txt');
  const lsp = new LspWorkspace({
    cwd: workspace,
    servers: [hostileServerConfig],
    env: { ...process.env, HOSTILE_TARGET: named, HOSTILE_LOG: log },
    protectedWrite: async (real, roots) =>
      roots.some((root) => real.startsWith(path.join(root, '.vscode') + path.sep))
        ? 'run by the editor'
        : undefined,
  });
  cleanups.push(() => lsp.close());
  const tools = createLspTools({ workspace: lsp });
  const tool = (name: string): AnyAgentTool => toolNamed(tools, name);
  return { workspace, secret, log, tool };
}

function resultText(result: Awaited<ReturnType<typeof executeTool>>): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

describe('a hostile language server', () => {
  it.each(['outside', 'link in the workspace'] as const)(
    'locations in a file %s: listed, never read out',
    async (target) => {
      const t = await setup(target);
      for (const name of ['lsp_definition', 'lsp_references']) {
        const result = await executeTool(t.tool(name), { path: 'main.hx', symbol: 'value' });
        const text = resultText(result);
        expect(text, name).not.toMatch(/SECRET-LINE/);
        // The locations themselves are still given (path:line:column).
        expect(text, name).toMatch(/:1:1/);
      }
    },
  );

  it('a rename of a file outside is refused, and the file is unchanged', async () => {
    const t = await setup('link in the workspace');
    const preview = await executeTool(t.tool('lsp_rename'), {
      path: 'main.hx',
      symbol: 'value',
      new_name: 'other',
    });
    expect(resultText(preview)).not.toMatch(/SECRET-LINE/);
    expect(await fs.readFile(t.secret, 'utf8')).toBe(`${secretLines.join('\n')}\n`);
  });

  it("a rename that edits the repository's .git/config is refused, and the file is unchanged", async () => {
    const t = await setup('a git config');
    const config = path.join(t.workspace, '.git', 'config');
    const before = await fs.readFile(config, 'utf8');
    const preview = await executeTool(t.tool('lsp_rename'), {
      path: 'main.hx',
      symbol: 'value',
      new_name: 'other',
    });
    expect(preview.isError).toBe(true);
    expect(resultText(preview)).toContain("inside a repository's git directory");
    // No preview id to apply: nothing is written.
    const apply = await executeTool(t.tool('lsp_apply_rename'), { id: 'rename-1' });
    expect(apply.isError).toBe(true);
    expect(await fs.readFile(config, 'utf8')).toBe(before);
  });

  it('a rename into a place the app protects asks for full-access (a link to it too)', async () => {
    const t = await setup('an editor task');
    const preview = await executeTool(t.tool('lsp_rename'), {
      path: 'main.hx',
      symbol: 'value',
      new_name: 'other',
    });
    expect(preview.isError, resultText(preview)).toBe(false);
    const subjects = await t.tool('lsp_apply_rename').permissionSubjects?.({ id: 'rename-1' });
    expect(subjects).toEqual({
      subjects: [path.join(t.workspace, '.vscode', 'tasks.json')],
      tier: 'full-access',
    });
  });

  it('a workspace file swapped for a link out is not sent to the server', async () => {
    const t = await setup('outside');
    await executeTool(t.tool('lsp_definition'), { path: 'main.hx', symbol: 'value' });
    // The model's command swaps the file the server has open for a link to the secret…
    await fs.rm(path.join(t.workspace, 'main.hx'));
    await fs.symlink(t.secret, path.join(t.workspace, 'main.hx'));
    // …and asks again: the client must not read it through the link and send it over.
    await executeTool(t.tool('lsp_definition'), { path: 'main.hx', line: 1, column: 1 });
    const saw = await fs.readFile(t.log, 'utf8').catch(() => '');
    expect(saw).toContain('let value = 1;');
    expect(saw).not.toMatch(/SECRET-LINE/);
  });
});
