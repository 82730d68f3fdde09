import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runBashLines, toolResults } from '../testing/bash-lines.js';
import { assertBuilt, runCli, tempDir, writeScript } from '../testing/test-support.js';

// Issue 34, "Needless questions": in -p's default read-only mode, reading commands (ls, git
// status…) run; in workspace-write with the OS sandbox, bash runs without a question (the
// sandbox keeps it in the workspace, off the network). Every line that could write still asks
// (exit 4 in -p, nothing changed).

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
beforeAll(() => assertBuilt());

async function repository() {
  const dir = await tempDir('agent-cli-sandbox-perms-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  execFileSync('git', ['init', '-q', workspace]);
  await writeFile(join(workspace, 'notes.txt'), 'alpha\nbeta\n');
  return { dir: dir.path, workspace };
}

describe('read-only mode (-p default)', () => {
  it.for(['auto', 'off'])(
    'ls, cat, grep, head, wc run without a question (--sandbox %s): exit 0',
    async (sandbox, context) => {
      if (sandbox === 'auto') skipWithout('bwrap')(context);
      const setup = await repository();
      const { code, stdout } = await runBashLines(
        setup,
        ['ls', 'cat notes.txt | grep beta', 'head -n 1 notes.txt && wc -l notes.txt'],
        ['--sandbox', sandbox],
      );
      const ran = toolResults(stdout);
      expect(ran.map((result) => result.errorKind)).toEqual([undefined, undefined, undefined]);
      expect(ran[0]?.text).toContain('notes.txt');
      expect(ran[1]?.text).toContain('beta');
      expect(code).toBe(0);
    },
  );

  it('git status, log and diff run in the sandbox', async (context) => {
    skipWithout('bwrap')(context);
    const setup = await repository();
    const { code, stdout } = await runBashLines(
      setup,
      ['git status --short', 'git log --oneline -3', 'git diff --stat'],
      ['--sandbox', 'required'],
    );
    const ran = toolResults(stdout);
    expect(ran.every((result) => result.errorKind !== 'denied')).toBe(true);
    expect(ran[0]?.text).toContain('?? notes.txt');
    expect(code).toBe(0);
  });

  it('a repository whose .git/config runs a program on reads: git asks', async (context) => {
    skipWithout('bwrap')(context);
    const setup = await repository();
    execFileSync('git', ['-C', setup.workspace, 'config', 'core.fsmonitor', 'touch pwned']);
    const { code, stdout } = await runBashLines(setup, ['git status'], ['--sandbox', 'required']);
    expect(toolResults(stdout)[0]?.errorKind).toBe('denied');
    expect(existsSync(join(setup.workspace, 'pwned'))).toBe(false);
    expect(code).toBe(4);
  });

  it.for([
    'touch x.txt',
    'ls > listing.txt',
    'ls >> notes.txt',
    'cat $(rm -rf notes.txt)',
    'cat `rm notes.txt`',
    'echo "$(rm notes.txt)"',
    'find . -delete',
    'find . -name notes.txt -exec rm {} ;',
    'git log --output=log.txt',
    'git diff --ext-diff',
    'git branch new-branch',
    'git -c core.pager=touch log',
    'sort -o sorted.txt notes.txt',
    'sed -i s/alpha/omega/ notes.txt',
    'cat notes.txt | tee copy.txt',
    'cat notes.txt | sh',
    'LD_PRELOAD=/tmp/evil.so ls',
    'PATH=/tmp ls',
    'ls; rm notes.txt',
    'eval "rm notes.txt"',
    'bash -c "rm notes.txt"',
    'xargs rm < notes.txt',
    'uniq notes.txt out.txt',
  ])('asks (and -p denies) %s: nothing changes, exit 4', async (command, context) => {
    skipWithout('bwrap')(context);
    const setup = await repository();
    const before = readdirSync(setup.workspace).sort();
    const { code, stdout } = await runBashLines(setup, [command], ['--sandbox', 'required']);
    expect(toolResults(stdout)[0]?.errorKind).toBe('denied');
    expect(readdirSync(setup.workspace).sort()).toEqual(before);
    expect(await readFile(join(setup.workspace, 'notes.txt'), 'utf8')).toBe('alpha\nbeta\n');
    expect(code).toBe(4);
  });
});

describe('workspace-write mode', () => {
  it('in the sandbox, touch inside the workspace runs unasked; a write outside is blocked by the sandbox', async (context) => {
    skipWithout('bwrap')(context);
    const setup = await repository();
    const outside = await mkdtemp('/var/tmp/agent-cli-outside-');
    cleanups.push(() => rm(outside, { recursive: true, force: true }));
    const { code, stdout } = await runBashLines(
      setup,
      ['touch x.txt', `touch ${outside}/escaped.txt`],
      ['--mode', 'workspace-write', '--sandbox', 'required'],
    );
    const [inside, escaped] = toolResults(stdout);
    expect(inside?.errorKind).toBeUndefined();
    expect(existsSync(join(setup.workspace, 'x.txt'))).toBe(true);
    expect(escaped?.errorKind).toBe('failed');
    expect(escaped?.text).toContain('Blocked by the sandbox');
    expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
    // Nothing needed approval.
    expect(code).toBe(0);
  });

  it('an opaque line, or one an ask rule covers, still asks in the sandbox', async (context) => {
    skipWithout('bwrap')(context);
    const setup = await repository();
    const { code, stdout } = await runBashLines(
      setup,
      ['eval "$CMD"', 'touch asked.txt'],
      ['--mode', 'workspace-write', '--sandbox', 'required', '--ask', 'bash(touch *)'],
    );
    expect(toolResults(stdout).map((result) => result.errorKind)).toEqual(['denied', 'denied']);
    expect(existsSync(join(setup.workspace, 'asked.txt'))).toBe(false);
    expect(code).toBe(4);
  });

  it('without the sandbox, touch asks and the denial names --mode full-access', async () => {
    const setup = await repository();
    const script = await writeScript(setup.dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'touch x.txt' } }] },
      { text: 'done' },
    ]);
    const { code, stderr } = await runCli([
      '-p',
      'go',
      '--scripted',
      script,
      '--cwd',
      setup.workspace,
      '--mode',
      'workspace-write',
      '--sandbox',
      'off',
    ]);
    expect(stderr).toContain("--allow 'bash(touch x.txt)', or use --mode full-access");
    expect(existsSync(join(setup.workspace, 'x.txt'))).toBe(false);
    expect(code).toBe(4);
  });
});
