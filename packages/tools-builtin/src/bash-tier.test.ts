import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { executeTool, type PermissionMode, PermissionPolicy, toolResultText } from '@agent/core';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { createBashTool } from './bash.js';
import { bashCallTier } from './bash-tier.js';
import { makeTempDir } from './test-helpers.js';

// The tier of one bash call decides which mode runs it without a question: `read-only` for a
// line of reading commands, `workspace-write` for anything the sandbox (network off) contains,
// else `full-access`. Checked on the pure function and through the real tool, loop and sandbox.

const sandboxOn = { active: true, network: 'off' } as const;
const sandboxOff = { active: false, network: 'off' } as const;
const backgrounds: BackgroundTasks[] = [];
afterEach(async () => {
  for (const background of backgrounds.splice(0)) await background.killAll();
});

function workspace(): string {
  const dir = makeTempDir('bash-tier-');
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'alpha\nbeta\n');
  fs.mkdirSync(path.join(dir, 'src'));
  fs.writeFileSync(path.join(dir, 'src', 'a.ts'), 'export const a = 1;\n');
  return dir;
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, stdio: 'ignore' });
}

describe('bashCallTier', () => {
  it.each([
    ['ls -la', 'read-only'],
    ['cat notes.txt | grep beta', 'read-only'],
    ['touch x.txt', 'workspace-write'],
    ['rm -rf src', 'workspace-write'],
    ['ls > listing.txt', 'workspace-write'],
    ['curl https://example.com', 'workspace-write'],
  ] as const)('sandboxed, network off: %s → %s', async (command, tier) => {
    const cwd = workspace();
    expect(
      (await bashCallTier(command, { sandbox: sandboxOn, cwd, unsandboxed: false })).tier,
    ).toBe(tier);
  });

  it('a read that may never end (a device, a FIFO, /proc, /sys) is not read-only, by any name', async () => {
    const cwd = workspace();
    fs.symlinkSync('/dev/zero', path.join(cwd, 'zero'));
    execFileSync('mkfifo', [path.join(cwd, 'pipe')]);
    for (const command of [
      'cat /dev/zero',
      'head -c 5 /dev/urandom',
      'tail -c +1 /dev/zero',
      'cat < /dev/zero',
      'grep x /dev/zero',
      'cat /de?/zero',
      'cat /*/zero',
      'cat /d*/urandom',
      'cat ../../../../../../dev/zero',
      'cat ../../../../../../de*/zero',
      'cat zero',
      'cat pipe',
      'wc -c < pipe',
      'cat /proc/self/mem',
      'cat /proc/kmsg',
      'cat /sys/kernel/debug/x',
      'cat ~/../../dev/zero',
    ]) {
      for (const sandbox of [sandboxOn, { active: false, network: 'off' as const }]) {
        const { tier, reason } = await bashCallTier(command, { sandbox, cwd, unsandboxed: false });
        expect(tier, `${command} (${reason})`).not.toBe('read-only');
      }
    }
    for (const command of [
      'cat notes.txt',
      'cat notes.txt > /dev/null',
      'ls src',
      'cat - < notes.txt',
    ]) {
      const { tier } = await bashCallTier(command, { sandbox: sandboxOn, cwd, unsandboxed: false });
      expect(tier, command).toBe('read-only');
    }
  });

  it('with the network on, or allow-listed, a command that is not read-only needs full access', async () => {
    const cwd = workspace();
    for (const network of ['on', { allowHosts: ['example.com'] }] as const) {
      const sandbox = { active: true, network };
      expect((await bashCallTier('touch x', { sandbox, cwd, unsandboxed: false })).tier).toBe(
        'full-access',
      );
      expect((await bashCallTier('ls', { sandbox, cwd, unsandboxed: false })).tier).toBe(
        'read-only',
      );
    }
  });

  it('outside the sandbox (dangerouslyDisableSandbox) nothing but confined reads is below full access', async () => {
    const cwd = workspace();
    const context = { sandbox: sandboxOn, cwd, unsandboxed: true };
    expect((await bashCallTier('touch x', context)).tier).toBe('full-access');
    expect((await bashCallTier('cat notes.txt', context)).tier).toBe('read-only');
    expect((await bashCallTier('cat /etc/hostname', context)).tier).toBe('full-access');
  });

  it("a command PATH finds in the workspace (the workspace's own ls) is not read-only", async () => {
    const cwd = workspace();
    const base = { sandbox: sandboxOn, cwd, unsandboxed: false };
    const system = '/usr/local/bin:/usr/bin:/bin';
    // Relative and workspace entries are harmless while they hold no such command.
    for (const searchPath of [
      system,
      `./node_modules/.bin:${system}`,
      `${cwd}/bin:${system}`,
      `:${system}`,
    ]) {
      const verdict = await bashCallTier('ls | grep a', { ...base, searchPath });
      expect(verdict.tier, searchPath).toBe('read-only');
    }
    fs.mkdirSync(path.join(cwd, 'node_modules', '.bin'), { recursive: true });
    fs.writeFileSync(path.join(cwd, 'node_modules', '.bin', 'ls'), '#!/bin/sh\ntouch pwned\n', {
      mode: 0o755,
    });
    fs.writeFileSync(path.join(cwd, 'grep'), '#!/bin/sh\ntouch pwned\n', { mode: 0o755 });
    const cases: [string, string, string][] = [
      ['ls', `./node_modules/.bin:${system}`, 'ls'],
      ['ls', `node_modules/.bin:${system}`, 'ls'],
      ['ls', `${cwd}/node_modules/.bin:${system}`, 'ls'],
      ['cat x | grep a', `:${system}`, 'grep'],
      ['cat x | grep a', `.:${system}`, 'grep'],
    ];
    for (const [command, searchPath, name] of cases) {
      const verdict = await bashCallTier(command, { ...base, searchPath });
      expect(verdict.tier, searchPath).toBe('workspace-write');
      expect(verdict.reason, searchPath).toContain(`the workspace's own ${name}`);
    }
    // A workspace folder whose name starts with two dots is the workspace's all the same.
    for (const folder of ['..x', '...', '..bin']) {
      fs.mkdirSync(path.join(cwd, folder), { recursive: true });
      fs.writeFileSync(path.join(cwd, folder, 'ls'), '#!/bin/sh\ntouch pwned\n', { mode: 0o755 });
      const searchPath = `${cwd}/${folder}:${system}`;
      const verdict = await bashCallTier('ls', { ...base, searchPath });
      expect(verdict.tier, searchPath).toBe('workspace-write');
      expect(verdict.reason, searchPath).toContain("the workspace's own ls");
    }
    // Found outside first, or a builtin: fine.
    const later = await bashCallTier('ls', {
      ...base,
      searchPath: `${system}:./node_modules/.bin`,
    });
    expect(later.tier).toBe('read-only');
    const builtin = await bashCallTier('echo hi', { ...base, searchPath: `.:${system}` });
    expect(builtin.tier).toBe('read-only');
  });

  it('without a sandbox, reads must stay in the workspace by real path', async () => {
    const cwd = workspace();
    const outside = makeTempDir('bash-tier-outside-');
    fs.writeFileSync(path.join(outside, 'secret'), 'x');
    fs.symlinkSync(path.join(outside, 'secret'), path.join(cwd, 'link'));
    fs.symlinkSync(outside, path.join(cwd, 'dirlink'));
    const context = { sandbox: sandboxOff, cwd, unsandboxed: false };
    const cases: [string, string][] = [
      ['cat notes.txt', 'read-only'],
      ['ls src', 'read-only'],
      ['grep -rn beta .', 'read-only'],
      ['head -n 1 src/a.ts missing-file', 'read-only'],
      ['cat /etc/hostname', 'full-access'],
      ['cat ../outside', 'full-access'],
      ['cat src/../../x', 'full-access'],
      ['cat link', 'full-access'],
      ['cat dirlink/secret', 'full-access'],
      ['ls dirlink', 'full-access'],
      ['cat < /etc/hostname', 'full-access'],
      ['grep -f /etc/hostname notes.txt', 'full-access'],
      // od's -w takes a value only attached: a bare one leaves the next word a file od reads.
      ['od -c -w /etc/hostname', 'full-access'],
      ['od -c -w link', 'full-access'],
      ['od -c -w8 notes.txt', 'read-only'],
      ['cat *.txt', 'full-access'],
      ['cat ~/.bashrc', 'full-access'],
      ['cat $HOME/.bashrc', 'full-access'],
      ['git status', 'full-access'],
      ['touch x', 'full-access'],
    ];
    for (const [command, tier] of cases) {
      expect((await bashCallTier(command, context)).tier, command).toBe(tier);
    }
  });

  it("git reads only when the repository's own configuration runs nothing", async () => {
    const cwd = workspace();
    const context = { sandbox: sandboxOn, cwd, unsandboxed: false };
    // No repository: git fails on its own, nothing it could run.
    expect((await bashCallTier('git status', context)).tier).toBe('read-only');
    git(cwd, 'init', '-q');
    expect((await bashCallTier('git status', context)).tier).toBe('read-only');
    fs.mkdirSync(path.join(cwd, 'sub'));
    expect((await bashCallTier('git log', { ...context, cwd: path.join(cwd, 'sub') })).tier).toBe(
      'read-only',
    );
    const settings: [string, string][] = [
      ['core.fsmonitor', 'touch /tmp/pwned'],
      ['diff.x.textconv', 'sh -c evil'],
      ['filter.x.clean', 'evil'],
      ['core.pager', 'evil'],
      ['include.path', '../evil.config'],
      ['log.showSignature', 'true'],
      ['diff.external', 'evil'],
    ];
    for (const [key, value] of settings) {
      git(cwd, 'config', key, value);
      const verdict = await bashCallTier('git status', context);
      expect(verdict.tier, key).toBe('workspace-write');
      expect(verdict.reason, key).toMatch(/which git may run on a read/);
      git(cwd, 'config', '--unset', key);
    }
    // A worktree's .git file points at its git directory; its configuration is checked too.
    git(cwd, 'config', 'user.email', 'a@b.c');
    git(cwd, 'config', 'user.name', 'a');
    git(cwd, 'commit', '-q', '--allow-empty', '-m', 'first');
    const tree = path.join(makeTempDir('bash-tier-wt-'), 'tree');
    git(cwd, 'worktree', 'add', '-q', tree);
    const inTree = { ...context, cwd: tree };
    expect((await bashCallTier('git status', inTree)).tier).toBe('read-only');
    git(cwd, 'config', 'core.fsmonitor', 'evil');
    expect((await bashCallTier('git status', inTree)).tier).toBe('workspace-write');
  });
});

/**
 * A workspace that is itself a bare repository (a downloaded archive of one, no `.git`): git finds
 * it from the folder and runs its `textconv` on `git log -p`. The driver writes `canary` in the
 * workspace.
 */
function bareRepository(): string {
  const cwd = makeTempDir('bash-tier-bare-');
  git(cwd, 'init', '-q', '--bare');
  const tree = makeTempDir('bash-tier-bare-tree-');
  fs.writeFileSync(path.join(tree, 'f.txt'), 'one\n');
  const env = {
    ...process.env,
    GIT_DIR: cwd,
    GIT_WORK_TREE: tree,
    GIT_INDEX_FILE: path.join(tree, '.index'),
  };
  for (const args of [
    ['add', 'f.txt'],
    ['-c', 'user.name=a', '-c', 'user.email=b', 'commit', '-qm', 'one'],
  ])
    execFileSync('git', args, { cwd: tree, env, stdio: 'ignore' });
  git(cwd, 'config', 'diff.x.textconv', `sh -c 'touch "${path.join(cwd, 'canary')}"; cat "$0"'`);
  fs.writeFileSync(path.join(cwd, 'info', 'attributes'), '* diff=x\n');
  return cwd;
}

/**
 * A repository whose submodule's own configuration (`.git/modules/sub/config`) sets
 * `core.fsmonitor`: `git status` in the superproject runs git in the submodule, and that runs it.
 */
function superproject(): string {
  const origin = makeTempDir('bash-tier-sub-origin-');
  git(origin, 'init', '-q');
  git(
    origin,
    '-c',
    'user.name=a',
    '-c',
    'user.email=b',
    'commit',
    '-q',
    '--allow-empty',
    '-m',
    'x',
  );
  const cwd = makeTempDir('bash-tier-super-');
  git(cwd, 'init', '-q');
  git(cwd, '-c', 'protocol.file.allow=always', 'submodule', '-q', 'add', origin, 'sub');
  git(cwd, '-c', 'user.name=a', '-c', 'user.email=b', 'commit', '-qm', 'sub');
  git(
    cwd,
    'config',
    '-f',
    '.git/modules/sub/config',
    'core.fsmonitor',
    `touch "${path.join(cwd, 'canary')}"; false #`,
  );
  fs.writeFileSync(path.join(cwd, 'sub', 'new.txt'), 'x');
  return cwd;
}

describe('git finds a repository by other ways than .git/config', () => {
  it.each([
    ['the workspace is a bare repository', bareRepository, '.'],
    ['a folder inside a bare repository', bareRepository, 'refs'],
    ['the submodule of a repository', superproject, '.'],
  ] as const)(
    '%s: its configuration is checked, so git is not read-only',
    async (_label, make, below) => {
      const cwd = make();
      const verdict = await bashCallTier('git log -p', {
        sandbox: sandboxOn,
        cwd: path.join(cwd, below),
        unsandboxed: false,
      });
      expect(verdict.tier).toBe('workspace-write');
      expect(verdict.reason).toMatch(/which git may run on a read|submodules/);
    },
  );

  it('a submodule without any setting of its own is still refused (fail closed)', async () => {
    const cwd = superproject();
    git(cwd, 'config', '-f', '.git/modules/sub/config', '--unset', 'core.fsmonitor');
    expect(
      (await bashCallTier('git status', { sandbox: sandboxOn, cwd, unsandboxed: false })).reason,
    ).toMatch(/submodules/);
  });
});

describe('through the real tool and loop', () => {
  async function run(
    command: string,
    options: { mode: PermissionMode; sandbox: 'required' | 'off'; cwd?: string },
  ) {
    const cwd = options.cwd ?? workspace();
    const background = new BackgroundTasks();
    backgrounds.push(background);
    const bash = createBashTool({ cwd, backgroundTasks: background, sandbox: options.sandbox });
    const policy = new PermissionPolicy({ mode: options.mode });
    const result = await executeTool(bash, { command }, { permissionGate: policy.gate });
    return { cwd, result, text: toolResultText(result.content) };
  }

  it('read-only mode: reading commands run, anything else is asked (denied without an approver)', async (context) => {
    skipWithout('bwrap')(context);
    const ran = await run('ls && cat notes.txt | grep beta', {
      mode: 'read-only',
      sandbox: 'required',
    });
    expect(ran.result.isError).toBe(false);
    expect(ran.text).toContain('beta');
    for (const command of [
      'touch x.txt',
      'ls > listing.txt',
      'cat $(rm notes.txt)',
      'find . -delete',
      'git log --output=x',
      'sort -o out notes.txt',
      'sed -i s/a/b/ notes.txt',
      'cat notes.txt | tee copy.txt',
      'LD_PRELOAD=/tmp/x.so ls',
    ]) {
      const denied = await run(command, { mode: 'read-only', sandbox: 'required' });
      expect(denied.result.errorKind, command).toBe('denied');
      expect(fs.readFileSync(path.join(denied.cwd, 'notes.txt'), 'utf8'), command).toBe(
        'alpha\nbeta\n',
      );
      expect(fs.readdirSync(denied.cwd).sort(), command).toEqual(['notes.txt', 'src']);
    }
  });

  it.for([
    ['git log -p in a bare repository', bareRepository, 'git log -p'],
    ['git status in a repository with a submodule', superproject, 'git status'],
  ] as const)(
    'read-only mode: %s runs nothing of the repository',
    async ([_label, make, command], context) => {
      skipWithout('bwrap')(context);
      const cwd = make();
      const ran = await run(command, { mode: 'read-only', sandbox: 'required', cwd });
      expect(ran.result.errorKind).toBe('denied');
      expect(fs.existsSync(path.join(cwd, 'canary'))).toBe(false);
    },
  );

  it('workspace-write mode in the sandbox: commands run unasked, and still cannot leave the workspace', async (context) => {
    skipWithout('bwrap')(context);
    const made = await run('touch made.txt && echo done', {
      mode: 'workspace-write',
      sandbox: 'required',
    });
    expect(made.result.errorKind).toBeUndefined();
    expect(fs.existsSync(path.join(made.cwd, 'made.txt'))).toBe(true);
    const outside = fs.mkdtempSync('/var/tmp/bash-tier-outside-');
    try {
      const escaped = await run(`touch ${outside}/escaped.txt`, {
        mode: 'workspace-write',
        sandbox: 'required',
      });
      // It ran (no question), and the sandbox stopped it.
      expect(escaped.result.errorKind).toBe('failed');
      expect(escaped.text).toContain('Blocked by the sandbox');
      expect(fs.existsSync(path.join(outside, 'escaped.txt'))).toBe(false);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
    // An opaque line is still asked (denied without an approver), sandbox or not.
    const opaque = await run('eval "$X"', { mode: 'workspace-write', sandbox: 'required' });
    expect(opaque.result.errorKind).toBe('denied');
  });

  it('workspace-write mode without a sandbox: writing commands are asked, reading ones run', async () => {
    const denied = await run('touch x.txt', { mode: 'workspace-write', sandbox: 'off' });
    expect(denied.result.errorKind).toBe('denied');
    expect(fs.existsSync(path.join(denied.cwd, 'x.txt'))).toBe(false);
    const read = await run('cat notes.txt', { mode: 'read-only', sandbox: 'off' });
    expect(read.text).toContain('alpha');
  });

  it('a deny or ask rule still decides before the tier', async (context) => {
    skipWithout('bwrap')(context);
    const cwd = workspace();
    const background = new BackgroundTasks();
    backgrounds.push(background);
    const bash = createBashTool({ cwd, backgroundTasks: background, sandbox: 'required' });
    const deny = new PermissionPolicy({ mode: 'full-access', deny: ['bash(cat *)'] });
    const denied = await executeTool(
      bash,
      { command: 'cat notes.txt' },
      { permissionGate: deny.gate },
    );
    expect(toolResultText(denied.content)).toContain('Denied by rule "bash(cat *)"');
    const ask = new PermissionPolicy({ mode: 'workspace-write', ask: ['bash(touch *)'] });
    const asked = await executeTool(bash, { command: 'touch y' }, { permissionGate: ask.gate });
    expect(asked.errorKind).toBe('denied');
    expect(fs.existsSync(path.join(cwd, 'y'))).toBe(false);
  });
});
