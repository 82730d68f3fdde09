/**
 * bash's sandbox keeps a repository's git directory and the home's startup files read-only: git
 * and the user's shell run what is planted there later, outside any sandbox. The file tools write
 * from the agent's own process, so in `workspace-write` mode a model could add `core.fsmonitor` to
 * `.git/config` with edit_file, unasked, and the user's next `git status` ran it. Such a write now
 * needs the `full-access` tier, and a link swapped in after the question does not carry a write there.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { executeTool, normalisePermissionSubjects, PermissionPolicy } from '@agent/core';
import { describe, expect, it } from 'vitest';
import { defaultTools } from './default-tools.js';
import { protectedWriteReason } from './protected-writes.js';
import { makeTempDir } from './test-helpers.js';
import { nodeFileSystem } from './workspace.js';

function repository() {
  const work = fs.realpathSync(makeTempDir());
  execFileSync('git', ['init', '-q', work]);
  // A vendored repository, a worktree-style .git file and a bare repository inside.
  execFileSync('git', ['init', '-q', path.join(work, 'vendor', 'lib')]);
  fs.mkdirSync(path.join(work, 'linked'));
  fs.writeFileSync(path.join(work, 'linked', '.git'), 'gitdir: ../.git\n');
  execFileSync('git', ['init', '-q', '--bare', path.join(work, 'mirror.git')]);
  fs.writeFileSync(path.join(work, 'notes.txt'), 'notes\n');
  return work;
}

function tool(tools: ReturnType<typeof defaultTools>, name: string) {
  const found = tools.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no ${name}`);
  return found;
}

async function tierOf(tools: ReturnType<typeof defaultTools>, name: string, args: object) {
  const subjects = await tool(tools, name).permissionSubjects?.(args as never);
  return normalisePermissionSubjects(subjects ?? []).tier;
}

describe('writes that plant what runs later outside the sandbox', () => {
  it.each([
    ['.git/config', true],
    ['.git/hooks/post-checkout', true],
    ['.git', true],
    ['vendor/lib/.git/config', true],
    ['linked/.git', true],
    ['mirror.git/config', true],
    ['mirror.git/hooks/pre-receive', true],
    ['notes.txt', false],
    ['src/new.ts', false],
    ['.github/workflows/ci.yml', false],
    ['.gitignore', false],
    ['.vscode/tasks.json', true],
    ['.vscode', true],
    ['.idea/workspace.xml', true],
    ['.devcontainer/devcontainer.json', true],
    ['.devcontainer.json', true],
    ['.claude/settings.json', true],
    ['.zed/settings.json', true],
    ['.opencode/plugins/p.js', true],
    ['.opencode/opencode.jsonc', true],
    ['opencode.json', true],
    ['opencode.jsonc', true],
    ['.gemini/settings.json', true],
    ['.cursor/hooks.json', true],
    ['.cursorignore', false],
    ['opencode.jsonl', false],
    ['.husky/pre-commit', true],
    ['.pre-commit-config.yaml', true],
    ['lefthook.yaml', true],
    ['.config/lefthook.json', true],
    ['.lefthook/pre-commit/lint.sh', true],
    ['.lefthook-local.toml', true],
    ['.config/other.yml', false],
    ['packages/app/.vscode/tasks.json', false],
    ['.envrc', false],
    ['.vscodeignore', false],
  ])('%s: protected %s', async (file, protectedPath) => {
    const work = repository();
    const reason = await protectedWriteReason(path.join(work, file), [work], {
      fs: nodeFileSystem,
      home: '/nonexistent-home',
    });
    expect(reason !== undefined).toBe(protectedPath);
    const tools = defaultTools({ cwd: work, tools: ['write_file', 'edit_file', 'notebook_edit'] });
    for (const name of ['write_file', 'edit_file', 'notebook_edit'])
      expect(await tierOf(tools, name, { path: file }), name).toBe(
        protectedPath ? 'full-access' : undefined,
      );
  });

  // A folder whose name starts with two dots is a folder like any other: taken for "outside the
  // workspace" (`relative.startsWith('..')`), a hook written there was not asked about.
  it.each([
    '..x/.git/config',
    '..x/.git/hooks/pre-commit',
    '.../.git',
    '..hidden/sub/.git/config',
    '.. /.git/hooks/post-checkout',
  ])('%s under a two-dot folder: protected', async (file) => {
    const work = repository();
    const reason = await protectedWriteReason(path.join(work, file), [work], {
      fs: nodeFileSystem,
      home: '/nonexistent-home',
    });
    expect(reason).toMatch(/git directory/);
    const tools = defaultTools({ cwd: work, tools: ['write_file', 'edit_file'] });
    for (const name of ['write_file', 'edit_file'])
      expect(await tierOf(tools, name, { path: file }), name).toBe('full-access');
  });

  it('the hooks directory core.hooksPath puts in the workspace; lifted by autoRunFiles: false', async () => {
    const work = repository();
    execFileSync('git', ['-C', work, 'config', 'core.hooksPath', '.githooks']);
    const tools = defaultTools({ cwd: work, tools: ['write_file'] });
    expect(await tierOf(tools, 'write_file', { path: '.githooks/pre-commit' })).toBe('full-access');
    expect(await tierOf(tools, 'write_file', { path: '.githooksx/a' })).toBeUndefined();
    // Set while the tools are in use: from the next call on.
    expect(await tierOf(tools, 'write_file', { path: '.hooks-later/pre-commit' })).toBeUndefined();
    execFileSync('git', ['-C', work, 'config', 'core.hooksPath', '.hooks-later']);
    expect(await tierOf(tools, 'write_file', { path: '.hooks-later/pre-commit' })).toBe(
      'full-access',
    );
    expect(await tierOf(tools, 'write_file', { path: '.githooks/pre-commit' })).toBeUndefined();
    execFileSync('git', ['-C', work, 'config', 'core.hooksPath', '.githooks']);
    const lifted = defaultTools({
      cwd: work,
      tools: ['write_file'],
      protectedWrites: { autoRunFiles: false },
    });
    for (const file of ['.githooks/pre-commit', '.vscode/tasks.json', '.devcontainer.json'])
      expect(await tierOf(lifted, 'write_file', { path: file }), file).toBeUndefined();
  });

  it('a file a lefthook configuration extends, in turn too', async () => {
    const work = repository();
    fs.writeFileSync(path.join(work, 'lefthook.yml'), 'extends:\n  - ci/base.yml\n');
    fs.mkdirSync(path.join(work, 'ci'));
    fs.writeFileSync(path.join(work, 'ci/base.yml'), 'extends: [ci/more.yml]\n');
    const tools = defaultTools({ cwd: work, tools: ['write_file'] });
    for (const file of ['ci/base.yml', 'ci/more.yml'])
      expect(await tierOf(tools, 'write_file', { path: file }), file).toBe('full-access');
    expect(await tierOf(tools, 'write_file', { path: 'ci/other.yml' })).toBeUndefined();
  });

  it("a file the repository's config includes (include.path), in turn too; lifted by git: false", async () => {
    const work = repository();
    fs.writeFileSync(path.join(work, 'shared.gitconfig'), '[include]\n\tpath = more.gitconfig\n');
    fs.writeFileSync(path.join(work, 'more.gitconfig'), '');
    execFileSync('git', ['-C', work, 'config', 'include.path', '../shared.gitconfig']);
    const tools = defaultTools({ cwd: work, tools: ['write_file', 'edit_file'] });
    expect(await tierOf(tools, 'write_file', { path: 'shared.gitconfig' })).toBe('full-access');
    expect(
      await tierOf(tools, 'edit_file', {
        path: 'more.gitconfig',
        old_string: 'a',
        new_string: 'b',
      }),
    ).toBe('full-access');
    expect(await tierOf(tools, 'write_file', { path: 'other.gitconfig' })).toBeUndefined();
    // One not made yet: git skips it, and runs what is planted there once it exists.
    execFileSync('git', ['-C', work, 'config', '--add', 'include.path', '../later.gitconfig']);
    expect(await tierOf(tools, 'write_file', { path: 'later.gitconfig' })).toBe('full-access');
    const lifted = defaultTools({
      cwd: work,
      tools: ['write_file'],
      protectedWrites: { git: false },
    });
    expect(await tierOf(lifted, 'write_file', { path: 'shared.gitconfig' })).toBeUndefined();
  });

  it("the home's startup files, when the workspace holds the home; lifted by the options", async () => {
    const home = fs.realpathSync(makeTempDir());
    const tools = defaultTools({
      cwd: home,
      tools: ['write_file'],
      protectedWrites: { home },
    });
    for (const file of [
      '.bashrc',
      '.config/fish/config.fish',
      '.local/bin/git',
      '.ssh/config',
      '.gitconfig',
    ])
      expect(await tierOf(tools, 'write_file', { path: file }), file).toBe('full-access');
    expect(await tierOf(tools, 'write_file', { path: 'projects/a.txt' })).toBeUndefined();
    const lifted = defaultTools({
      cwd: home,
      tools: ['write_file'],
      protectedWrites: { home, startupFiles: false, git: false },
    });
    expect(await tierOf(lifted, 'write_file', { path: '.bashrc' })).toBeUndefined();
    execFileSync('git', ['init', '-q', home]);
    expect(await tierOf(lifted, 'write_file', { path: '.git/config' })).toBeUndefined();
  });

  it('in workspace-write mode the policy asks (denies with no one to ask); full-access allows', async () => {
    const work = repository();
    const tools = defaultTools({ cwd: work, tools: ['edit_file'] });
    const edit = tool(tools, 'edit_file');
    const args = {
      path: '.git/config',
      old_string: '[core]',
      new_string: '[core]\n\tfsmonitor = x',
    };
    const subjects = normalisePermissionSubjects(
      (await edit.permissionSubjects?.(args as never)) ?? [],
    );
    const request = {
      toolName: 'edit_file',
      args,
      tier: subjects.tier ?? 'workspace-write',
      subjects: subjects.subjects,
    };
    const workspaceWrite = new PermissionPolicy({ mode: 'workspace-write' });
    expect((await workspaceWrite.gate(request as never)).behavior).toBe('deny');
    const fullAccess = new PermissionPolicy({ mode: 'full-access' });
    expect((await fullAccess.gate(request as never)).behavior).toBe('allow');
  });

  it('a link swapped in after the question does not carry the write into .git', async () => {
    const work = repository();
    const tools = defaultTools({ cwd: work, tools: ['write_file'] });
    const write = tool(tools, 'write_file');
    const args = { path: 'notes.txt', content: '[core]\n\tfsmonitor = "touch PWNED"\n' };
    const asked: unknown[] = [];
    const result = await executeTool(write, args, {
      // While the user is asked about notes.txt, a background command makes it a link into .git.
      permissionGate: (request) => {
        asked.push(request.tier);
        fs.rmSync(path.join(work, 'notes.txt'));
        fs.symlinkSync('.git/config', path.join(work, 'notes.txt'));
        return { behavior: 'allow' };
      },
    });
    expect(asked).toEqual(['workspace-write']);
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('leads elsewhere than when it was judged');
    expect(fs.readFileSync(path.join(work, '.git', 'config'), 'utf8')).not.toContain('PWNED');
    // An ordinary path swapped the same way is written where the link leads, as before.
    const plain = await executeTool(
      write,
      { path: 'other.txt', content: 'x' },
      {
        permissionGate: () => ({ behavior: 'allow' }),
      },
    );
    expect(plain.isError).not.toBe(true);
  });
});
