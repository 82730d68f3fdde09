// A repository whose own `.git/config` runs a program on every git read — `core.fsmonitor`, a
// pager, an external diff, hooks, filter and textconv drivers, credential and ssh helpers,
// includes — and the CLI used in it every way a new user would: -p with every file tool, the
// trust commands, `mcp serve`, the REPL with /rewind and --continue. The CLI runs no git of its
// own; if it ever does, it must be immune: each program only writes a canary outside the workspace.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../testing/repl-harness.js';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

beforeAll(assertBuilt);
const harness = new Harness();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await harness.dispose();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const hooks = [
  'pre-commit',
  'post-checkout',
  'post-index-change',
  'reference-transaction',
  'pre-auto-gc',
  'fsmonitor-watchman',
];

/** A committed repository with every program-running setting of git's, each touching a canary in `outside`. */
async function hostileRepository(dir: string) {
  const workspace = join(dir, 'repo');
  const outside = join(dir, 'outside');
  await mkdir(outside);
  await mkdir(workspace);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: workspace, stdio: 'ignore' });
  git('init', '-q');
  await writeFile(join(workspace, 'notes.txt'), 'needle\n');
  await writeFile(join(workspace, '.gitattributes'), '* filter=evil diff=evil merge=evil\n');
  git('add', '.');
  git('-c', 'user.name=a', '-c', 'user.email=b', 'commit', '-qm', 'first');
  const canary = (name: string) => `touch '${join(outside, name)}'`;
  const hooksDir = join(workspace, 'hooks');
  await mkdir(hooksDir);
  for (const hook of hooks) {
    await writeFile(join(hooksDir, hook), `#!/bin/sh\n${canary(`hook-${hook}`)}\n`);
    await chmod(join(hooksDir, hook), 0o755);
  }
  await writeFile(
    join(workspace, 'included.cfg'),
    `[core]\n\tpager = ${canary('included-pager')}\n`,
  );
  const config: [string, string][] = [
    ['core.fsmonitor', `${canary('fsmonitor')}; false #`],
    ['core.pager', canary('pager')],
    ['core.hooksPath', hooksDir],
    ['core.sshCommand', canary('ssh')],
    ['core.askPass', canary('askpass')],
    ['core.editor', canary('editor')],
    ['diff.external', canary('diff-external')],
    ['diff.evil.textconv', `sh -c '${canary('textconv')}; cat "$0"'`],
    ['filter.evil.process', canary('filter-process')],
    ['filter.evil.clean', `${canary('filter-clean')}; cat`],
    ['filter.evil.smudge', `${canary('filter-smudge')}; cat`],
    ['credential.helper', `!${canary('credential')}`],
    ['gpg.program', canary('gpg')],
    ['log.showSignature', 'true'],
    ['include.path', join(workspace, 'included.cfg')],
    [`includeIf.gitdir:${workspace}/.path`, join(workspace, 'included.cfg')],
  ];
  for (const [key, value] of config) git('config', key, value);
  // A change for status and diff to notice.
  await writeFile(join(workspace, 'notes.txt'), 'needle\nchanged\n');
  return { workspace, outside };
}

describe('a repository whose .git/config runs programs: the CLI runs none of them', () => {
  it('-p with every file tool, --continue, the trust commands and mcp serve', async () => {
    const dir = await tempDir('agent-cli-hostile-git-');
    cleanups.push(dir.dispose);
    const { workspace, outside } = await hostileRepository(dir.path);
    const env = cleanEnv({ AGENT_HOME: join(dir.path, 'home') });
    const script = await writeScript(dir.path, [
      {
        toolCalls: [
          { name: 'read_file', arguments: { path: 'notes.txt' } },
          { name: 'search', arguments: { pattern: 'needle' } },
          { name: 'glob', arguments: { pattern: '**/*' } },
          { name: 'list_files', arguments: {} },
        ],
      },
      {
        toolCalls: [
          {
            name: 'edit_file',
            arguments: { path: 'notes.txt', old_string: 'changed', new_string: 'edited' },
          },
        ],
      },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'new.txt', content: 'x' } }] },
      { text: 'done' },
    ]);
    const run = await runCli(
      ['-p', 'go', '--scripted', script, '--cwd', workspace, '--mode', 'workspace-write'],
      { env },
    );
    expect(run.code, run.stderr).toBe(0);
    const again = await writeScript(dir.path, [{ text: 'again' }], 'again.json');
    expect(
      (await runCli(['-p', 'more', '-c', '--scripted', again, '--cwd', workspace], { env })).code,
    ).toBe(0);
    for (const args of [
      ['trust', '--cwd', workspace],
      ['trust', 'list'],
      ['trust', 'revoke', '--cwd', workspace],
    ])
      expect((await runCli(args, { cwd: workspace, env })).code, args.join(' ')).toBe(0);
    const serve = await runCli(['mcp', 'serve', '--cwd', workspace], { env, input: '' });
    expect(serve.code, serve.stderr).toBe(0);
    expect(await readdir(outside)).toEqual([]);
    // Control: git itself, run here, does run them.
    spawnSync('git', ['status'], { cwd: workspace, stdio: 'ignore' });
    expect((await readdir(outside)).length).toBeGreaterThan(0);
  });

  it("the model's git status where .git/commondir moves the configuration: asked, not run", async () => {
    const dir = await tempDir('agent-cli-hostile-commondir-');
    cleanups.push(dir.dispose);
    const workspace = join(dir.path, 'repo');
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: workspace, stdio: 'ignore' });
    await mkdir(workspace);
    git('init', '-q');
    // `.git/config` stays clean; git reads the configuration of the common directory instead.
    await mkdir(join(workspace, '.common'));
    await rename(join(workspace, '.git', 'objects'), join(workspace, '.common', 'objects'));
    await rename(join(workspace, '.git', 'refs'), join(workspace, '.common', 'refs'));
    await mkdir(join(workspace, '.git', 'refs'));
    await writeFile(
      join(workspace, '.common', 'config'),
      `${await readFile(join(workspace, '.git', 'config'), 'utf8')}\tfsmonitor = "touch CANARY; false"\n`,
    );
    await writeFile(join(workspace, '.git', 'commondir'), '../.common\n');
    const script = await writeScript(dir.path, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'git status' } }] },
      { text: 'done' },
    ]);
    // -p in its default read-only mode: a reading git command runs unasked only when git runs nothing.
    const run = await runCli(['-p', 'go', '--scripted', script, '--cwd', workspace], {
      env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }),
    });
    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toContain('✗ bash [denied]');
    expect(await readdir(workspace)).not.toContain('CANARY');
    // Control: git itself does run it.
    spawnSync('git', ['status'], { cwd: workspace, stdio: 'ignore' });
    expect(await readdir(workspace)).toContain('CANARY');
  });

  it("the model's git show in a partial clone whose promisor remote runs a command: asked, not run", async () => {
    const dir = await tempDir('agent-cli-hostile-promisor-');
    cleanups.push(dir.dispose);
    const source = join(dir.path, 'source');
    const workspace = join(dir.path, 'repo');
    const git = (cwd: string, ...args: string[]) =>
      execFileSync('git', args, { cwd, stdio: 'ignore' });
    await mkdir(source);
    git(source, 'init', '-q');
    await writeFile(join(source, 'a.txt'), 'hello\n');
    git(source, 'add', '.');
    git(source, '-c', 'user.name=a', '-c', 'user.email=b', 'commit', '-qm', 'one');
    git(source, 'config', 'uploadpack.allowFilter', 'true');
    git(
      dir.path,
      'clone',
      '-q',
      '--no-local',
      '--filter=blob:none',
      '--no-checkout',
      `file://${source}`,
      workspace,
    );
    // The blob of a.txt is not there: reading it fetches from the remote, whose URL runs a command.
    git(workspace, 'config', 'remote.origin.url', 'ext::sh -c touch% CANARY');
    git(workspace, 'config', 'protocol.ext.allow', 'always');
    const script = await writeScript(dir.path, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'git show HEAD:a.txt' } }] },
      { text: 'done' },
    ]);
    const run = await runCli(['-p', 'go', '--scripted', script, '--cwd', workspace], {
      env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }),
    });
    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toContain('✗ bash [denied]');
    expect(await readdir(workspace)).not.toContain('CANARY');
    spawnSync('git', ['show', 'HEAD:a.txt'], { cwd: workspace, stdio: 'ignore' });
    expect(await readdir(workspace)).toContain('CANARY');
  });

  it('the REPL: a prompt that writes, /rewind, /exit (tmux)', async (context) => {
    skipWithout('tmux')(context);
    const { dir } = await harness.folder('agent-cli-hostile-git-repl-');
    const { workspace, outside } = await hostileRepository(dir);
    const repl = await harness.start({
      dir,
      workspace,
      env: cleanEnv({ AGENT_HOME: join(dir, 'home') }),
      script: {
        steps: [
          {
            toolCalls: [
              { name: 'write_file', arguments: { path: 'notes.txt', content: 'rewritten\n' } },
            ],
          },
          { text: 'Wrote it.' },
        ],
      },
      args: ['--mode', 'workspace-write'],
    });
    await repl.waitForPrompt();
    repl.submit('write the notes');
    await repl.waitForText('Wrote it.');
    await repl.waitForPrompt(2);
    repl.submit('/rewind 1 code');
    await repl.waitForText('restored notes.txt');
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
    expect(await readdir(outside)).toEqual([]);
  });
});
