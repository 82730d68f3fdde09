import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { bubblewrapProblem } from './bubblewrap-lookup.js';
import { commandConfinement } from './command-confinement.js';
import { prepareRunner, syscallNumbers } from './escape-harness.js';

// A command of a long-lived sandbox shares the helper's user and namespaces. It must not be able
// to take the helper over (trace it, write its memory, take its descriptors, kill it) nor touch a
// concurrent command of the same session: a real owner process (the built package, as root and as
// nobody) starts a sibling command, then an attacker that tries each, then an ordinary command.

const available = bubblewrapProblem() === undefined;
const isRoot = process.getuid?.() === 0;
const parent = fs.mkdtempSync(path.join('/var/tmp', 'agent-helper-confinement-'));
fs.chmodSync(parent, 0o755);
const runner = available ? prepareRunner(parent) : undefined;
afterAll(() => fs.rmSync(parent, { recursive: true, force: true }));

const numbers = syscallNumbers();

/**
 * The attacks, in perl, one line of output each: `<name>: TOOK` when the kernel let it through,
 * `<name>: refused <errno text>` when it did not. HELPER and SIBLING are pids inside the sandbox.
 * Where a descriptor of the helper's stdout is taken, the attacker writes a forged exit event for
 * itself (call 2) through it: the host would report that instead of its real exit.
 */
const attackSource = String.raw`
my ($helper, $sibling, $pipes) = @ARGV;
my $forged = qq({"type":"exit","id":3,"code":99,"signal":null,"over":true}\n);
sub report { my ($name, $ok) = @_; print $ok ? "$name: TOOK\n" : "$name: refused $!\n" }
report('ptrace seize the helper', syscall(${numbers.NR_PTRACE}, 0x4206, $helper + 0, 0, 0) >= 0);
report('ptrace seize the sibling', syscall(${numbers.NR_PTRACE}, 0x4206, $sibling + 0, 0, 0) >= 0);
report('open the helper memory for writing', open(my $memory, '+<', "/proc/$helper/mem"));
report('open the helper environment', open(my $environ, '<', "/proc/$helper/environ"));
report('read where the helper descriptors lead', defined readlink("/proc/$helper/fd/1"));
my $pidfd = syscall(434, $helper + 0, 0);
report('pidfd_open the helper', $pidfd >= 0);
my $taken = syscall(438, $pidfd, 1, 0);
report('pidfd_getfd the helper stdout', $taken >= 0);
if ($taken >= 0) { open(my $out, '>&=', $taken); syswrite($out, $forged) }
report('signal 0 to the sandbox init', kill(0, 1));
report('SIGTERM to the sibling command', kill('TERM', $sibling));
report('pidfd_send_signal SIGKILL to the helper', syscall(424, $pidfd, 9, 0, 0) >= 0);
report('SIGKILL to the helper', kill('KILL', $helper));
# The FIFOs made in the pipe directory for later commands: found by listing it, written into.
report('list the pipe directory', opendir(my $listing, $pipes));
if ($listing) {
  for my $name (grep { /^later-/ } readdir($listing)) {
    use Fcntl;
    sysopen(my $fifo, "$pipes/$name", O_WRONLY | O_NONBLOCK) and syswrite($fifo, "FORGED\n");
  }
}
# What a command may still do to its own processes.
my $child = fork();
if ($child == 0) { sleep 100; exit 0 }
report('ptrace seize its own child', syscall(${numbers.NR_PTRACE}, 0x4206, $child, 0, 0) >= 0);
report('SIGTERM to its own child', kill('TERM', $child));
waitpid($child, 0);
`;

const ownerSource = `
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
const [entry, workspace, attackFile] = process.argv.slice(2);
const { createSandbox } = await import(entry);
const sandbox = createSandbox({ mode: 'required', writableRoots: [workspace], onWarning: () => {} });
const host = sandbox.createHost();
let serial = 0;
function readAll(fd) {
  return new Promise((resolve) => {
    const chunks = [];
    const socket = new net.Socket({ fd, readable: true, writable: false });
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}
async function start(file, args) {
  const names = [0, 1].map(() => join(host.pipeDirectory, 'call-' + serial++));
  execFileSync('mkfifo', ['-m', '600', ...names]);
  const ends = names.map((name) => ({
    read: fs.openSync(name, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK),
    write: fs.openSync(name, fs.constants.O_WRONLY),
  }));
  const outputs = ends.map((end) => readAll(end.read));
  try {
    const command = await host.run({ file, args, cwd: workspace, env: { PATH: process.env.PATH }, stdout: names[0], stderr: names[1] });
    return { command, output: Promise.all(outputs).then((parts) => parts.join('')) };
  } finally {
    for (const end of ends) fs.closeSync(end.write);
    for (const name of names) fs.unlinkSync(name);
  }
}
const sibling = await start('/bin/sleep', ['1000']);
let siblingExit;
void sibling.command.exited.then((exit) => { siblingExit = exit; });
// The helper: the only process in the sandbox running the helper's file.
const find = "for p in /proc/[0-9]*; do tr '\\\\0' ' ' < $p/cmdline 2>/dev/null | grep -q '^[^ ]*node [^ ]*exec-helper' && echo \${p#/proc/}; done";
const finder = await start('/bin/bash', ['-c', find]);
await finder.command.exited;
await finder.command.end(100);
const helper = (await finder.output).trim();
// A FIFO made ahead for a later command, its read end open, as the bash tool's pool makes them.
const later = join(host.pipeDirectory, 'later-' + randomBytes(16).toString('hex'));
execFileSync('mkfifo', ['-m', '600', later]);
const laterRead = fs.openSync(later, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
const attacker = await start('/usr/bin/perl', [attackFile, helper, String(sibling.command.pid), host.pipeDirectory]);
const attackerExit = await attacker.command.exited;
await attacker.command.end(1000);
const attack = await attacker.output;
const next = await start('/bin/bash', ['-c', 'echo next; exit 7']);
const nextExit = await next.command.exited;
await next.command.end(100);
const nextOutput = await next.output;
const laterBytes = Buffer.alloc(64);
let laterOutput = '';
try { laterOutput = laterBytes.toString('utf8', 0, fs.readSync(laterRead, laterBytes)); } catch {}
fs.closeSync(laterRead);
const siblingAlive = siblingExit === undefined;
await sibling.command.end(100);
await host.close();
await sandbox.close();
process.stdout.write(JSON.stringify({ helper, attack, attackerExit, nextExit, nextOutput, laterOutput, siblingAlive, siblingExit, limitations: sandbox.status.limitations }));
`;

interface OwnerReport {
  helper: string;
  attack: string;
  attackerExit: { type: string; code?: number | null; signal?: string | null };
  nextExit: { type: string; code?: number | null };
  nextOutput: string;
  laterOutput: string;
  siblingAlive: boolean;
  limitations: string[];
}

async function runOwner(label: string, uid: number | undefined): Promise<OwnerReport> {
  if (runner === undefined) throw new Error('bubblewrap is not available');
  const base = fs.mkdtempSync(path.join(parent, `${label}-`));
  const workspace = path.join(base, 'ws');
  const temporary = path.join(base, 'tmp');
  fs.mkdirSync(workspace);
  fs.mkdirSync(temporary);
  const owner = path.join(runner.dir, `owner-${label}.mjs`);
  fs.writeFileSync(owner, ownerSource, { mode: 0o644 });
  const attackFile = path.join(runner.dir, 'attack.pl');
  fs.writeFileSync(attackFile, attackSource, { mode: 0o644 });
  if (uid !== undefined)
    for (const dir of [base, workspace, temporary]) fs.chownSync(dir, uid, uid);
  const command = [runner.node, owner, runner.entry, workspace, attackFile];
  const child = spawn(
    uid === undefined ? (command[0] ?? '') : 'setpriv',
    uid === undefined
      ? command.slice(1)
      : [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...command],
    {
      env: { PATH: process.env.PATH, TMPDIR: temporary, HOME: base },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    },
  );
  const chunks = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  child.stdout.on('data', (chunk: Buffer) => chunks.stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => chunks.stderr.push(chunk));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const stdout = Buffer.concat(chunks.stdout).toString('utf8');
  if (code !== 0) {
    throw new Error(
      `the owner (as ${label}) exited ${code}: ${Buffer.concat(chunks.stderr).toString('utf8')}`,
    );
  }
  return JSON.parse(stdout) as OwnerReport;
}

const users = isRoot
  ? [
      { label: 'root', uid: undefined },
      { label: 'nobody', uid: 65534 },
    ]
  : [{ label: `uid ${process.getuid?.()}`, uid: undefined }];

const refusedAttacks = [
  'ptrace seize the helper',
  'ptrace seize the sibling',
  'open the helper memory for writing',
  'open the helper environment',
  'read where the helper descriptors lead',
  'pidfd_getfd the helper stdout',
  'signal 0 to the sandbox init',
  'SIGTERM to the sibling command',
  'pidfd_send_signal SIGKILL to the helper',
  'SIGKILL to the helper',
];

describe.each(users)('a command of a long-lived sandbox, as $label', ({ label, uid }) => {
  beforeEach(skipWithout('bwrap'));

  // Landlock or not: the pipe directory is searchable, not listable, and the bind is read-only.
  it('cannot list the pipe directory, nor find and write into a FIFO made there for a later command', async () => {
    const report = await runOwner(label, uid);
    expect(report.attack).toMatch(/^list the pipe directory: refused Permission denied$/m);
    expect(report.laterOutput).toBe('');
    expect(report.nextOutput).toBe('next\n');
  });

  it('cannot trace, read, take descriptors from or signal the helper or a sibling command', async () => {
    if (commandConfinement().type !== 'landlock') {
      // Where Landlock cannot scope signals the sandbox says so (and the attacks would work).
      const report = await runOwner(label, uid);
      expect(report.limitations.join('\n')).toMatch(/trace, signal/);
      return;
    }
    const report = await runOwner(label, uid);
    expect(report.helper).toMatch(/^\d+$/);
    for (const attack of refusedAttacks) {
      expect(report.attack).toMatch(
        new RegExp(`^${attack}: refused (Operation not permitted|Permission denied)$`, 'm'),
      );
    }
    expect(report.attack).toMatch(/^pidfd_open the helper: TOOK$/m);
    // Its own processes are its own.
    expect(report.attack).toMatch(/^ptrace seize its own child: TOOK$/m);
    expect(report.attack).toMatch(/^SIGTERM to its own child: TOOK$/m);
    // The attacker's own exit, not the forged one; the helper still serves; the sibling still runs.
    expect(report.attackerExit).toMatchObject({ type: 'exit', code: 0, signal: null });
    expect(report.nextExit).toMatchObject({ type: 'exit', code: 7 });
    expect(report.nextOutput).toBe('next\n');
    expect(report.siblingAlive).toBe(true);
  });
});
