import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceAutoRunFiles } from './auto-run-files.js';
import { runnerSuite } from './runner-suite.js';

// The auto-run files over a session's life and after it. The empty folders a sandbox makes as
// mount points (.vscode, .idea…) were removed only by the exit handler of the process that made
// them: a process killed by SIGKILL left them in the user's workspace for good, and a process
// closing removed one another process's sandbox still had bound. A `core.hooksPath` set during
// the session was never seen. Real processes and bubblewrap, as root and as nobody.

const { available, users, parent, runner } = runnerSuite('auto-run files over time', 'auto-run');

/** The folders made for a sandbox where none exists: every `evenNew` entry. */
const made = workspaceAutoRunFiles
  .filter((file) => file.evenNew)
  .map((file) => file.name)
  .sort();

/**
 * One process with a sandbox of the built package (`wrap`: a sandbox per command; `host`: one
 * long-lived sandbox). It runs `true`, says READY, then runs each line of its stdin as a shell
 * script in the sandbox and prints `OUTPUT <json>`; when its stdin ends it closes the sandbox and
 * exits. `sweep`: only makes a sandbox, and exits.
 */
const childSource = `
const [entry, mode, workspace] = process.argv.slice(2);
const { createSandbox } = await import(entry);
const { spawnSync } = await import('node:child_process');
const fs = await import('node:fs');
const readline = await import('node:readline');
const sandbox = createSandbox({ mode: 'required', writableRoots: [workspace], onWarning: () => {} });
if (mode === 'sweep') process.exit(0);
const env = { PATH: process.env.PATH, HOME: process.env.HOME };
const host = mode === 'host' ? sandbox.createHost() : undefined;
let serial = 0;
const run = async (script) => {
  // The output comes back through a file in the workspace (the host's commands write to FIFOs).
  const out = workspace + '/.out-' + serial++;
  const line = 'exec >' + JSON.stringify(out) + ' 2>&1; ' + script;
  if (host !== undefined) {
    const command = await host.run({ file: '/bin/sh', args: ['-c', line], cwd: workspace, env, stdout: '/dev/null', stderr: '/dev/null' });
    await command.exited;
  } else {
    const wrapped = await sandbox.wrap({ file: '/bin/sh', args: ['-c', line], cwd: workspace, env });
    spawnSync(wrapped.file, wrapped.args, { cwd: wrapped.cwd, env: wrapped.env, stdio: 'ignore' });
  }
  const text = fs.readFileSync(out, 'utf8');
  fs.rmSync(out);
  return text;
};
await run('true');
process.stdout.write('READY\\n');
for await (const script of readline.createInterface({ input: process.stdin })) {
  process.stdout.write('OUTPUT ' + JSON.stringify(await run(script)) + '\\n');
}
await sandbox.close();
process.exit(0);
`;

/** A child started by `start`, with the lines it printed handed out one by one. */
interface Child {
  process: ChildProcess;
  nextLine(): Promise<string>;
}

describe.runIf(available).each(users)('auto-run files over time, as $label', (user) => {
  let base = '';
  let home = '';
  let script = '';
  const children = new Set<ChildProcess>();

  beforeAll(() => {
    base = fs.mkdtempSync(path.join(parent, `${user.label}-`));
    home = path.join(base, 'home');
    fs.mkdirSync(home);
    script = path.join(runner.dir, 'auto-run-child.mjs');
    fs.writeFileSync(script, childSource);
    if (user.uid !== undefined) fs.chownSync(home, user.uid, user.gid ?? user.uid);
    fs.chmodSync(base, 0o755);
  });
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
  });

  const workspace = (name: string): string => {
    const dir = path.join(base, name);
    fs.mkdirSync(dir);
    execFileSync('git', ['init', '-q', dir]);
    if (user.uid !== undefined) execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, dir]);
    return dir;
  };

  const start = (mode: string, dir: string): Child => {
    const command = [runner.node, script, runner.entry, mode, dir];
    const argv =
      user.uid === undefined
        ? command
        : ['setpriv', `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', ...command];
    const [file = '', ...args] = argv;
    const child = spawn(file, args, {
      cwd: base,
      env: { HOME: home, PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    children.add(child);
    child.once('exit', () => children.delete(child));
    if (child.stdout === null) throw new Error('no stdout');
    const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    return {
      process: child,
      nextLine: async () => {
        const next = await lines.next();
        if (next.done === true) throw new Error(`the ${mode} child ended without a line`);
        return next.value;
      },
    };
  };

  const ready = async (mode: string, dir: string): Promise<Child> => {
    const child = start(mode, dir);
    expect(await child.nextLine()).toBe('READY');
    return child;
  };
  /** Runs `line` in the child's sandbox; resolves with what it printed. */
  const command = async (child: Child, line: string): Promise<string> => {
    child.process.stdin?.write(`${line}\n`);
    const printed = await child.nextLine();
    expect(printed).toMatch(/^OUTPUT /);
    return JSON.parse(printed.slice('OUTPUT '.length)) as string;
  };
  const finish = async (child: Child): Promise<void> => {
    const exited = once(child.process, 'exit');
    child.process.stdin?.end();
    expect((await exited)[0]).toBe(0);
  };
  const kill = async (child: Child): Promise<void> => {
    const exited = once(child.process, 'exit');
    child.process.kill('SIGKILL');
    await exited;
  };
  const sweep = async (dir: string): Promise<void> => {
    const child = start('sweep', dir);
    const [code] = await once(child.process, 'exit');
    expect(code).toBe(0);
  };
  const listing = (dir: string): string[] =>
    fs
      .readdirSync(dir)
      .filter((name) => name !== '.git')
      .sort();
  const git = (dir: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'safe.directory=*', '-C', dir, ...args]);

  it('the placeholders a SIGKILLed process left are removed by the next sandbox; what the user made there stays', async () => {
    const dir = workspace('killed');
    const held = await ready('wrap', dir);
    expect(listing(dir)).toEqual(made);
    await kill(held);
    // Left behind: no exit handler ran.
    expect(listing(dir)).toEqual(made);
    // Meanwhile the user put a file in one, and made another folder afresh at the same path.
    fs.writeFileSync(path.join(dir, '.idea', 'workspace.xml'), '<x/>');
    fs.rmdirSync(path.join(dir, '.zed'));
    fs.mkdirSync(path.join(dir, '.zed'));
    await sweep(dir);
    expect(listing(dir)).toEqual(['.idea', '.zed']);
    expect(fs.readdirSync(path.join(dir, '.idea'))).toEqual(['workspace.xml']);
  });

  it('an empty folder the user made is never removed', async () => {
    const dir = workspace('users-own');
    fs.mkdirSync(path.join(dir, '.vscode'));
    if (user.uid !== undefined) fs.chownSync(path.join(dir, '.vscode'), user.uid, user.gid ?? 0);
    await kill(await ready('wrap', dir));
    await sweep(dir);
    expect(listing(dir)).toEqual(['.vscode']);
    await finish(await ready('wrap', dir));
    expect(listing(dir)).toEqual(['.vscode']);
  });

  it('a placeholder another running process has bound stays, whoever closes or is killed first', async () => {
    const dir = workspace('shared');
    const first = await ready('host', dir);
    const second = await ready('host', dir);
    // The first closes normally: the second's long-lived sandbox still has them bound.
    await finish(first);
    expect(listing(dir)).toEqual(made);
    expect(await command(second, 'mkdir .idea/x && echo ESCAPED; true')).not.toContain('ESCAPED');
    // A third is killed while the second runs; a fourth sweeps: still the second's.
    await kill(await ready('wrap', dir));
    await sweep(dir);
    expect(listing(dir)).toEqual(made);
    // The second is killed too: now nobody uses them.
    await kill(second);
    await sweep(dir);
    expect(listing(dir)).toEqual([]);
  });

  it('a sandboxed command can neither read nor forge the record', async () => {
    const dir = workspace('forge');
    const held = await ready('wrap', dir);
    const state = path.join(home, '.local', 'state', 'agent-sandbox');
    const records = path.join(state, 'placeholders');
    expect(fs.readdirSync(records).length).toBeGreaterThan(0);
    const text = await command(
      held,
      `ls -A "${state}" | wc -l; mkdir -p "${records}"; echo '{}' > "${records}/1-1.json"; true`,
    );
    expect(text.trim().split('\n')[0]).toBe('0');
    expect(fs.readdirSync(records)).not.toContain('1-1.json');
    await finish(held);
    expect(listing(dir)).toEqual([]);
  });

  it.each(['wrap', 'host'])(
    'a core.hooksPath set during the session, and a hook config made, are read-only from the next command on (%s)',
    async (mode) => {
      const dir = workspace(`hooks-${mode}`);
      const githooks = path.join(dir, '.githooks');
      fs.mkdirSync(githooks);
      fs.writeFileSync(path.join(githooks, 'pre-commit'), '#!/bin/sh\n', { mode: 0o755 });
      if (user.uid !== undefined)
        execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, githooks]);
      const held = await ready(mode, dir);
      // Before: an ordinary folder of the project.
      expect(await command(held, 'echo "# a" >> .githooks/pre-commit && echo WROTE')).toContain(
        'WROTE',
      );
      // The user (outside the sandbox) points git at it.
      git(dir, 'config', 'core.hooksPath', '.githooks');
      const after = await command(
        held,
        'echo "touch /tmp/pwned" >> .githooks/pre-commit && echo ESCAPED hook; echo x > .githooks/post-checkout && echo ESCAPED new; echo "repos: []" > .pre-commit-config.yaml && echo MADE config',
      );
      expect(after).not.toContain('ESCAPED');
      expect(after).toMatch(/Read-only file system/);
      expect(after).toContain('MADE config');
      // Then at one that does not exist yet.
      git(dir, 'config', 'core.hooksPath', '.hooks-later');
      const later = await command(
        held,
        'mkdir -p .hooks-later && echo x > .hooks-later/pre-commit && echo ESCAPED later; echo x >> .pre-commit-config.yaml && echo ESCAPED config; echo x > .githooks/pre-commit && echo WROTE old',
      );
      expect(later).not.toContain('ESCAPED');
      // No longer git's hooks: the project's folder again.
      expect(later).toContain('WROTE old');
      await finish(held);
      expect(fs.readFileSync(path.join(dir, '.pre-commit-config.yaml'), 'utf8')).toBe(
        'repos: []\n',
      );
      expect(listing(dir)).toEqual(['.githooks', '.pre-commit-config.yaml']);
    },
  );
});
