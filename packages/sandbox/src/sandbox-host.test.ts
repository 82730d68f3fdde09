import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bubblewrapProblem } from './bubblewrap-lookup.js';
import { prepareRunner } from './escape-harness.js';
import { sweepAbandonedPipeDirectories } from './pipe-directories.js';
import { createSandbox } from './sandbox.js';
import { createSandboxHost, type SandboxHost } from './sandbox-host.js';

// The long-lived sandbox dies with its owner, however the owner dies: a real owner process
// (the built package, run by a copied node, as root and as nobody) is SIGKILLed while a command
// and a background job run in its sandbox; nothing of the sandbox may survive.

const available = bubblewrapProblem() === undefined;
const isRoot = process.getuid?.() === 0;
const parent = fs.mkdtempSync(path.join('/var/tmp', 'agent-sandbox-host-'));
fs.chmodSync(parent, 0o755);
const runner = available ? prepareRunner(parent) : undefined;
afterAll(() => fs.rmSync(parent, { recursive: true, force: true }));

const ownerSource = `
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
const [entry, workspace, tag] = process.argv.slice(2);
const { createSandbox } = await import(entry);
const sandbox = createSandbox({ mode: 'required', writableRoots: [workspace] });
const host = sandbox.createHost();
const names = [0, 1].map((index) => join(host.pipeDirectory, 'owner-' + index));
execFileSync('mkfifo', names);
const ends = names.map((name) => [fs.openSync(name, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK), fs.openSync(name, fs.constants.O_WRONLY)]);
await host.run({
  file: '/bin/bash',
  args: ['-c', '(setsid sleep ' + tag + ' &); sleep ' + tag],
  cwd: workspace,
  env: { PATH: process.env.PATH },
  stdout: names[0],
  stderr: names[1],
});
process.stdout.write('ready ' + host.pipeDirectory + '\\n');
setInterval(() => {}, 1000);
`;

/** Host pids of live processes whose arguments (joined by spaces) contain `text` (or start with it). */
function processesWith(text: string, where: 'anywhere' | 'start' = 'anywhere'): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'latin1');
        if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return false;
        const args = fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1').replaceAll('\0', ' ');
        return where === 'start' ? args.startsWith(text) : args.includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Waits (bounded) until no process matches: the kernel ends a pid namespace asynchronously. */
async function gone(text: string, withinMs: number): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  let left = processesWith(text);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    left = processesWith(text);
  }
  return left;
}

const owners: ChildProcess[] = [];
afterEach(() => {
  for (const owner of owners.splice(0)) owner.kill('SIGKILL');
});

const users = isRoot
  ? [
      { label: 'root', uid: undefined },
      { label: 'nobody', uid: 65534 },
    ]
  : [{ label: `uid ${process.getuid?.()}`, uid: undefined }];

describe.each(users)(
  'a long-lived sandbox whose owner is SIGKILLed, as $label',
  ({ label, uid }) => {
    beforeEach(skipWithout('bwrap'));

    it('leaves no process behind: not the helper, not the command, not its setsid daemon', async () => {
      if (runner === undefined) throw new Error('bubblewrap is not available');
      const base = fs.mkdtempSync(path.join(parent, `${label}-`));
      const workspace = path.join(base, 'ws');
      const temporary = path.join(base, 'tmp');
      fs.mkdirSync(workspace);
      fs.mkdirSync(temporary);
      const owner = path.join(runner.dir, `owner-${label}.mjs`);
      fs.writeFileSync(owner, ownerSource, { mode: 0o644 });
      if (uid !== undefined) {
        for (const dir of [base, workspace, temporary]) fs.chownSync(dir, uid, uid);
      }
      const tag = `7${process.pid % 1000}.${Date.now() % 1000}${uid ?? 0}`;
      const command = [runner.node, owner, runner.entry, workspace, tag];
      const child = spawn(
        uid === undefined ? (command[0] ?? '') : 'setpriv',
        uid === undefined
          ? command.slice(1)
          : [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...command],
        {
          env: { PATH: process.env.PATH, TMPDIR: temporary, HOME: base },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      // A failed expectation below must not leave the owner (and so its sandbox) running.
      owners.push(child);
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const ready = await new Promise<string>((resolve, reject) => {
        let stdout = '';
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          const match = /^ready (.+)$/m.exec(stdout);
          if (match?.[1] !== undefined) resolve(match[1]);
        });
        child.once('exit', (code) => reject(new Error(`the owner exited (${code}): ${stderr}`)));
      });
      // Both sleeps (the command and its setsid daemon) and the helper run.
      const deadline = Date.now() + 10_000;
      // The sleeps themselves (the shell's command line names them too, for a moment).
      while (processesWith(`sleep ${tag}`, 'start').length < 2 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(processesWith(`sleep ${tag}`, 'start')).toHaveLength(2);
      expect(processesWith(`${ready}/exec-helper.cjs`).length).toBeGreaterThan(0);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      expect(await gone(`sleep ${tag}`, 5_000)).toEqual([]);
      expect(await gone(`${ready}/exec-helper.cjs`, 5_000)).toEqual([]);
      // Its directory is left (no exit handler ran); the next host of that user removes it.
      expect(fs.existsSync(ready)).toBe(true);
      if (uid === undefined) {
        expect(await sweepAbandonedPipeDirectories(temporary)).toEqual([ready]);
        expect(fs.existsSync(ready)).toBe(false);
      }
    });
  },
);

/** A FIFO in the host's pipe directory, held open at both ends so a command's output never blocks. */
function openFifo(directory: string, name: string): { file: string; close: () => void } {
  const file = path.join(directory, name);
  spawnSync('mkfifo', [file]);
  const ends = [
    fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK),
    fs.openSync(file, fs.constants.O_WRONLY),
  ];
  return {
    file,
    close: () => {
      for (const fd of ends) fs.closeSync(fd);
    },
  };
}

/**
 * A host whose helper runs neither sandboxed nor confined, as it does where Landlock cannot
 * scope its commands (helper-confinement.test.ts shows a sandboxed command cannot take the
 * helper's descriptors here): its commands can take its output and write into it, and the
 * host's own defences must hold.
 */
function unconfinedHost(workspace: string): SandboxHost {
  return createSandboxHost({
    environment: (env) => env,
    launch: async (_command, { helperArgs }) => ({
      file: process.execPath,
      args: helperArgs,
      cwd: workspace,
      env: { PATH: process.env.PATH },
      key: 'unconfined',
    }),
  });
}

/** Runs `/bin/true` on `host` with FIFOs of its own named after `name`: it exits 0 and is ended. */
async function runTrue(host: SandboxHost, workspace: string, name: string): Promise<void> {
  const [out, err] = [
    openFifo(host.pipeDirectory, `${name}-out`),
    openFifo(host.pipeDirectory, `${name}-err`),
  ];
  const command = await host.run({
    file: '/bin/true',
    args: [],
    cwd: workspace,
    env: {},
    stdout: out.file,
    stderr: err.file,
  });
  expect(await command.exited).toMatchObject({ type: 'exit', code: 0, signal: null });
  await command.end(100);
  out.close();
  err.close();
}

/**
 * perl that takes the stdout of the helper whose command line names the directory in ARGV[0]
 * (pidfd_open + pidfd_getfd, as the same user) into $s. Other tests' helpers may run on this
 * machine: only this host's is matched.
 */
const takeHelperOutput = [
  'opendir(my $d, "/proc"); my $helper; my $dir = shift @ARGV;',
  'for my $p (grep { /^\\d+$/ } readdir($d)) { open(my $c, "<", "/proc/$p/cmdline") or next; my $l = <$c>; $helper = $p + 0 if defined $l && index($l, "$dir/exec-helper") >= 0 }',
  'my $pidfd = syscall(434, $helper, 0); my $fd = syscall(438, $pidfd, 1, 0);',
  'open(my $s, ">&=", $fd) or die "took nothing: $!";',
].join(' ');

describe('a long-lived sandbox', () => {
  beforeEach(skipWithout('bwrap'));

  it('is not offered where the sandbox is off', () => {
    expect(createSandbox({ mode: 'off', writableRoots: [os.tmpdir()] }).createHost?.()).toBe(
      undefined,
    );
  });

  it('answers a command whose program is missing with a spawn error, and keeps serving', async () => {
    const workspace = fs.mkdtempSync(path.join(parent, 'spawn-'));
    const sandbox = createSandbox({ mode: 'required', writableRoots: [workspace] });
    const host = sandbox.createHost?.();
    if (host === undefined) throw new Error('no host');
    try {
      const fifo = (name: string) => openFifo(host.pipeDirectory, name);
      const [out, err] = [fifo('a'), fifo('b')];
      await expect(
        host.run({
          file: '/nonexistent/program',
          args: [],
          cwd: workspace,
          env: {},
          stdout: out.file,
          stderr: err.file,
        }),
      ).rejects.toMatchObject({ name: 'SandboxHostError', kind: 'spawn', code: 'ENOENT' });
      out.close();
      err.close();
      await runTrue(host, workspace, 'after');
    } finally {
      await host.close();
      await sandbox.close();
    }
  });

  it("bytes a command of an unconfined helper writes into its output do not hide the helper's next event", async () => {
    const workspace = fs.mkdtempSync(path.join(parent, 'garble-'));
    const garble = `${takeHelperOutput} syswrite($s, "{\\"type\\":\\"exit\\",\\"id\\":" . ("9" x 200));`;
    const host = unconfinedHost(workspace);
    const fifo = (name: string) => openFifo(host.pipeDirectory, name);
    try {
      const [out, err] = [fifo('a'), fifo('b')];
      const command = await host.run({
        file: '/usr/bin/perl',
        args: ['-e', garble, host.pipeDirectory],
        cwd: workspace,
        env: { PATH: process.env.PATH },
        stdout: out.file,
        stderr: err.file,
      });
      // Its own exit is reported (the event follows the garbage on the same line).
      expect(await command.exited).toMatchObject({ type: 'exit', code: 0, signal: null });
      await command.end(100);
      out.close();
      err.close();
    } finally {
      await host.close();
    }
  });

  it('in its sandbox, a daemon a command left behind (own session, empty environment) is ended with the last command', async () => {
    const workspace = fs.mkdtempSync(path.join(parent, 'daemon-'));
    const sandbox = createSandbox({ mode: 'required', writableRoots: [workspace] });
    const host = sandbox.createHost?.();
    if (host === undefined) throw new Error('no host');
    const tag = `${4000 + (process.pid % 1000)}.${Date.now() % 1000}`;
    try {
      const [out, err] = [
        openFifo(host.pipeDirectory, 'daemon-out'),
        openFifo(host.pipeDirectory, 'daemon-err'),
      ];
      // No marker survives `env -i`, and setsid leaves the command's group: only the sweep of
      // what started after the helper finds it.
      const command = await host.run({
        file: '/bin/sh',
        args: ['-c', `env -i setsid sleep ${tag} < /dev/null > /dev/null 2>&1 &`],
        cwd: workspace,
        env: { PATH: '/usr/bin:/bin' },
        stdout: out.file,
        stderr: err.file,
      });
      expect(await command.exited).toMatchObject({ type: 'exit', code: 0 });
      // Started in the background: it may take a moment to be there.
      for (let tries = 0; processesWith(`sleep ${tag}`).length === 0 && tries < 250; tries++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(processesWith(`sleep ${tag}`)).toHaveLength(1);
      await command.end(100);
      out.close();
      err.close();
      expect(await gone(`sleep ${tag}`, 5_000)).toEqual([]);
    } finally {
      for (const pid of processesWith(`sleep ${tag}`)) process.kill(pid, 'SIGKILL');
      await host.close();
      await sandbox.close();
    }
  });

  it("an unconfined helper's end leaves the machine's other processes alone (it sweeps only in a pid namespace of its own)", async () => {
    const workspace = fs.mkdtempSync(path.join(parent, 'bystander-'));
    const host = unconfinedHost(workspace);
    let bystander: ChildProcess | undefined;
    try {
      await runTrue(host, workspace, 'first');
      // Started after the helper, by nobody it ran: another suite's tmux or git on this machine.
      bystander = spawn('sleep', ['60'], { stdio: 'ignore' });
      await new Promise((resolve) => bystander?.once('spawn', resolve));
      // The helper's last command ends: it looks for what its commands left behind.
      await runTrue(host, workspace, 'second');
      expect(bystander.exitCode).toBeNull();
      expect(bystander.signalCode).toBeNull();
      // Alive, not a zombie its parent (this process) has not reaped yet.
      const stat = fs.readFileSync(`/proc/${bystander.pid}/stat`, 'latin1');
      expect(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)).toMatch(/[RSD]/);
    } finally {
      bystander?.kill('SIGKILL');
      await host.close();
    }
  });

  it("a command that takes an unconfined helper's output descriptor and floods it ends that helper, not this process", async () => {
    const workspace = fs.mkdtempSync(path.join(parent, 'flood-'));
    // Write 4 MB without a newline, blocking (the descriptor is shared with the helper, whose
    // Node made it non-blocking): the flood goes on however slowly the host reads. Unsandboxed,
    // the command outlives the killed helper and holds the pipe: the host reports the loss once
    // it has written all (in a sandbox its pid namespace ends with the helper).
    const flood = [
      takeHelperOutput,
      'my $chunk = "A" x 65536;',
      'use Fcntl; my $flags = fcntl($s, F_GETFL, 0); fcntl($s, F_SETFL, $flags & ~O_NONBLOCK);',
      'for (1 .. 64) { syswrite($s, $chunk) or last }',
    ].join(' ');
    const host = unconfinedHost(workspace);
    const fifo = (name: string) => openFifo(host.pipeDirectory, name);
    try {
      const [out, err] = [fifo('a'), fifo('b')];
      const command = await host.run({
        file: '/usr/bin/perl',
        args: ['-e', flood, host.pipeDirectory],
        cwd: workspace,
        env: { PATH: process.env.PATH },
        stdout: out.file,
        stderr: err.file,
      });
      // The helper is ended: the command with it.
      expect(await command.exited).toMatchObject({ type: 'lost' });
      out.close();
      err.close();
      // The next command gets a new helper.
      await runTrue(host, workspace, 'next');
    } finally {
      await host.close();
    }
  });
});
