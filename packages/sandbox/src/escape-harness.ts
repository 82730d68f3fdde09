/**
 * Fixture and runner for the escape suite (test code, not part of the package's entry). The
 * runner is a small script that imports the built package (dist) and runs attempts in sandboxes;
 * the suite starts it as root and, through setpriv, as nobody — with a fixture owned by that user,
 * so what stops an attempt is the sandbox and not file permissions.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { nodeForAnyUser } from '@agent/tooling-system-tools';
import type { Attempt } from './escape-attempts.js';
import { ancestorSecretFiles, homeSecretFiles, homeStartupFixture } from './escape-attempts.js';

/** A user the runner runs as. */
export interface RunnerUser {
  label: string;
  /** Started through `setpriv --reuid/--regid` when set (the suite runs as root). */
  uid?: number;
  gid?: number;
  /**
   * `cgroup.procs` files the runner is moved into before it starts (as root, before `setpriv`):
   * a cgroup delegated to that user.
   */
  cgroups?: readonly string[];
}

/** The fixture one user's runs see. */
export interface Fixture {
  base: string;
  home: string;
  workspace: string;
  ancestor: string;
  outside: string;
  socketPath: string;
  abstractName: string;
  /** Where the runner's TMPDIR points (for the proxy socket and seccomp files). */
  temporary: string;
  /** Connections the host's listeners (path and abstract) accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

export const victimText = 'original\n';
/** What each startup file of the fixture's home holds (a comment to bash, fish and git). */
export const startupFileText = '# original\n';
export const socketGreeting = 'SECRET-SOCKET-GREETING\n';

/** Builds the fixture under `parent` (outside /tmp and /run), owned by `user`. */
export async function makeFixture(parent: string, user: RunnerUser): Promise<Fixture> {
  const base = fs.mkdtempSync(path.join(parent, `${user.label}-`));
  const home = path.join(base, 'home');
  const ancestor = path.join(base, 'monorepo');
  const workspace = path.join(ancestor, 'packages', 'app');
  const outside = path.join(base, 'outside');
  const temporary = path.join(base, 'tmp');
  for (const dir of [home, workspace, outside, temporary, path.join(base, 'sockets')]) {
    fs.mkdirSync(dir, { recursive: true });
  }
  for (const file of homeSecretFiles) write(path.join(home, file), `SECRET-home/${file}\n`);
  for (const file of ancestorSecretFiles) write(path.join(base, file), `SECRET-${file}\n`);
  write(path.join(workspace, '.env'), 'PROJECT-VISIBLE=1\n');
  // The workspace is a repository: what a command writes in its .git runs later with the user's git.
  execFileSync('git', ['init', '-q', workspace]);
  write(path.join(workspace, '.git', 'hooks', 'pre-commit.sample'), '#!/bin/sh\n');
  // Repositories nested in it: vendored, deep, bare, and one whose git directory is elsewhere in it.
  for (const nested of ['vendor/lib', 'a/b/c/d/deep']) {
    execFileSync('git', ['init', '-q', path.join(workspace, nested)]);
  }
  execFileSync('git', ['init', '-q', '--bare', path.join(workspace, 'mirror.git')]);
  fs.mkdirSync(path.join(workspace, 'store'));
  execFileSync('git', [
    'init',
    '-q',
    `--separate-git-dir=${path.join(workspace, 'store', 'separate.git')}`,
    path.join(workspace, 'separate'),
  ]);
  // The home's startup files, for the run whose workspace is the home.
  for (const file of homeStartupFixture) write(path.join(home, file), startupFileText);
  fs.mkdirSync(path.join(home, '.local', 'bin'), { recursive: true });
  write(path.join(outside, 'victim.txt'), victimText);
  if (user.uid !== undefined) chownTree(base, user.uid, user.gid ?? user.uid);
  // Secrets private to their owner: without the sandbox only that user could read them.
  for (const file of [...homeSecretFiles.map((entry) => path.join(home, entry))]) {
    fs.chmodSync(file, 0o600);
  }

  let accepted = 0;
  const servers: net.Server[] = [];
  const sockets = new Set<net.Socket>();
  const socketPath = path.join(base, 'sockets', 'host.sock');
  const abstractName = `agent-sandbox-escape-${process.pid}-${user.label}`;
  for (const address of [socketPath, `\0${abstractName}`]) {
    const server = net.createServer((socket) => {
      accepted++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
      socket.end(socketGreeting);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(address, resolve);
    });
    servers.push(server);
  }
  // Anyone may connect (a daemon socket often lets a group in): only the sandbox stands between.
  fs.chmodSync(socketPath, 0o777);
  return {
    base,
    home,
    workspace,
    ancestor,
    outside,
    socketPath,
    abstractName,
    temporary,
    connections: () => accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all(
        servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
      );
      fs.rmSync(base, { recursive: true, force: true });
    },
  };
}

function write(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

function chownTree(entry: string, uid: number, gid: number): void {
  fs.chownSync(entry, uid, gid);
  if (!fs.lstatSync(entry).isDirectory()) return;
  for (const name of fs.readdirSync(entry)) chownTree(path.join(entry, name), uid, gid);
}

/** Syscall numbers the attempts use from perl, for this machine. */
// The mount API of Linux 5.2+ and clone3: numbered alike on every architecture.
const newMountApi = {
  NR_MOVE_MOUNT: 429,
  NR_FSMOUNT: 432,
  NR_FSPICK: 433,
  NR_MOUNT_SETATTR: 442,
  NR_CLONE3: 435,
};

export function syscallNumbers(machine = os.machine()): Record<string, string> {
  const tables: Record<string, Record<string, number>> = {
    x86_64: {
      NR_MOUNT: 165,
      NR_UMOUNT2: 166,
      NR_FSOPEN: 430,
      NR_OPEN_TREE: 428,
      NR_UNSHARE: 272,
      NR_PTRACE: 101,
      NR_KEYCTL: 250,
      NR_ADD_KEY: 248,
      NR_REQUEST_KEY: 249,
      NR_SOCKET: 41,
      NR_SOCKETPAIR: 53,
      NR_IO_URING_SETUP: 425,
      NR_X32_SOCKET: 41 | 0x40000000,
      NR_MKNODAT: 259,
      NR_OPENAT2: 437,
      NR_SETNS: 308,
      ...newMountApi,
    },
    aarch64: {
      NR_MOUNT: 40,
      NR_UMOUNT2: 39,
      NR_FSOPEN: 430,
      NR_OPEN_TREE: 428,
      NR_UNSHARE: 97,
      NR_PTRACE: 117,
      NR_KEYCTL: 219,
      NR_ADD_KEY: 217,
      NR_REQUEST_KEY: 218,
      NR_SOCKET: 198,
      NR_SOCKETPAIR: 199,
      NR_IO_URING_SETUP: 425,
      NR_MKNODAT: 33,
      NR_OPENAT2: 437,
      NR_SETNS: 268,
      ...newMountApi,
    },
  };
  const table = tables[machine];
  if (table === undefined) throw new Error(`the escape suite has no syscall table for ${machine}`);
  return Object.fromEntries(Object.entries(table).map(([name, value]) => [name, String(value)]));
}

/**
 * A static x86-64 program (a minimal ELF, no compiler needed) that makes one 32-bit system call
 * through `int 0x80` and exits 42 if it returned a descriptor, else 1. `socketcall` takes its
 * arguments from memory: they are placed after the code, below 4 GiB where a 32-bit pointer reaches.
 */
export function int80Program(call: 'socket' | 'socketcall'): Buffer {
  const base = 0x400000;
  const headerSize = 64 + 56;
  const code: number[] = [];
  const arguments32 = Buffer.alloc(12);
  arguments32.writeUInt32LE(1, 0); // AF_UNIX
  arguments32.writeUInt32LE(1, 4); // SOCK_STREAM
  arguments32.writeUInt32LE(0, 8);
  const mov = (opcode: number, value: number) => {
    code.push(
      opcode,
      value & 0xff,
      (value >> 8) & 0xff,
      (value >> 16) & 0xff,
      (value >>> 24) & 0xff,
    );
  };
  // The code is 42 bytes either way; the socketcall arguments follow it.
  const dataAddress = base + headerSize + 42;
  if (call === 'socket') {
    mov(0xb8, 359); // eax = __NR_socket (i386)
    mov(0xbb, 1); // ebx = AF_UNIX
    mov(0xb9, 1); // ecx = SOCK_STREAM
  } else {
    mov(0xb8, 102); // eax = __NR_socketcall (i386)
    mov(0xbb, 1); // ebx = SYS_SOCKET
    mov(0xb9, dataAddress); // ecx = &arguments
  }
  code.push(0x31, 0xd2); // xor edx, edx
  code.push(0xcd, 0x80); // int 0x80
  code.push(0x85, 0xc0); // test eax, eax
  code.push(0x78, 0x07); // js +7
  mov(0xbf, 42); // edi = 42
  code.push(0xeb, 0x05); // jmp +5
  mov(0xbf, 1); // edi = 1
  mov(0xb8, 60); // eax = exit (x86-64)
  code.push(0x0f, 0x05); // syscall
  if (code.length !== 42) throw new Error(`int80Program: code is ${code.length} bytes, not 42`);
  const body = Buffer.concat([Buffer.from(code), arguments32]);
  const size = headerSize + body.length;
  const header = Buffer.alloc(headerSize);
  header.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0], 0); // ELF, 64-bit, little-endian, v1
  header.writeUInt16LE(2, 16); // ET_EXEC
  header.writeUInt16LE(0x3e, 18); // EM_X86_64
  header.writeUInt32LE(1, 20);
  header.writeBigUInt64LE(BigInt(base + headerSize), 24); // entry
  header.writeBigUInt64LE(64n, 32); // program headers at 64
  header.writeUInt16LE(64, 52); // header size
  header.writeUInt16LE(56, 54); // program header size
  header.writeUInt16LE(1, 56); // one program header
  // PT_LOAD of the whole file, readable and executable.
  header.writeUInt32LE(1, 64);
  header.writeUInt32LE(5, 68);
  header.writeBigUInt64LE(0n, 72);
  header.writeBigUInt64LE(BigInt(base), 80);
  header.writeBigUInt64LE(BigInt(base), 88);
  header.writeBigUInt64LE(BigInt(size), 96);
  header.writeBigUInt64LE(BigInt(size), 104);
  header.writeBigUInt64LE(0x1000n, 112);
  return Buffer.concat([header, body]);
}

/** One sandbox the runner creates and the attempts it runs there. */
export interface RunnerRun {
  label: string;
  /** createSandbox options (JSON), beside `mode: 'required'`. */
  options: Record<string, unknown>;
  cwd: string;
  env: Record<string, string>;
  attempts: readonly Attempt[];
  /** Run the attempts one after another in one long-lived sandbox (`createHost`) rather than one sandbox each. */
  host?: boolean;
  /**
   * Directories put first on the runner's own PATH before it creates this run's sandbox (as
   * `npx` puts a project's `node_modules/.bin`), kept for the commands' environment too [none].
   */
  pathFirst?: readonly string[];
  /** `hiddenPatterns` and `readOnlyPatterns` of createSandbox, as patterns (`*` any run), matched as core's path rules are. */
  patterns?: { hidden?: readonly string[]; readOnly?: readonly string[] };
  /** Run the attempts in the sandbox's `readOnlyView()` [false]. */
  readOnlyView?: boolean;
}

/** What one attempt did. */
export interface AttemptResult {
  name: string;
  output: string;
  code: number | string | null;
  signal: string | null;
  /** What `checkPlanted()` reported right after the attempt. */
  planted: string[];
  /** What `plantedCheckIncomplete()` said then. */
  unread?: string;
  /** What the command's cgroup counted (`finish()`, or the host command's exit), when one bounded it. */
  limitEvents?: { memoryKills: number; refusedForks: number };
  /** `explainLimits` of those. */
  limitNote?: string;
  /** Set when the attempt was not run: what it `requires` is not bounded here. */
  skipped?: string;
}

/** What one run reported. */
export interface RunReport {
  label: string;
  status: {
    active: boolean;
    unixSockets: string;
    hiddenPaths: string[];
    limitations: string[];
    limits: {
      mechanism: string;
      maxProcesses?: number;
      maxMemoryBytes?: number;
      maxFileBytes?: number;
      maxProcessDataBytes?: number;
    };
  };
  description: string;
  results: AttemptResult[];
  /** The runner's pid (its cgroups are named for it). */
  runnerPid: number;
  /** The runner's descriptors when it started, by number: what each links to. */
  inherited: Record<string, string>;
}

const runnerSource = `
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
const input = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const { createSandbox } = await import(input.entry);

function perCall(sandbox, run, attempt) {
  return sandbox
    .wrap({ file: '/bin/bash', args: ['-c', attempt.script], cwd: run.cwd, env: { ...process.env, ...run.env } })
    .then((wrapped) => new Promise((resolve) => {
      execFile(
        wrapped.file,
        wrapped.args,
        { cwd: wrapped.cwd, env: wrapped.env, timeout: 30000, maxBuffer: 16 << 20, encoding: 'latin1' },
        (error, stdout, stderr) =>
          void Promise.resolve(wrapped.finish?.()).then((limitEvents) =>
            resolve({
              name: attempt.name,
              output: stdout + stderr,
              code: error ? (error.code ?? null) : 0,
              signal: error?.signal ?? null,
              limitEvents,
              limitNote: limitEvents === undefined ? undefined : sandbox.explainLimits(limitEvents),
            }),
          ),
      );
    }));
}

// Patterns as core's path rules read them: '*' any run of characters, '/' included; a folder
// matched covers what is inside it.
function patternOptions(patterns) {
  const option = (list) => {
    if (list === undefined) return undefined;
    const globs = list.map((pattern) => pattern.split('*'));
    const glob = (subject, parts) => {
      const first = parts[0], last = parts[parts.length - 1];
      if (parts.length === 1) return subject === first;
      if (subject.length < first.length + last.length || !subject.startsWith(first) || !subject.endsWith(last)) return false;
      let position = first.length;
      for (const part of parts.slice(1, -1)) {
        const found = subject.indexOf(part, position);
        if (found === -1 || found + part.length > subject.length - last.length) return false;
        position = found + part.length;
      }
      return true;
    };
    const matches = (path) => {
      for (let current = path; current.length > 0; current = current.slice(0, current.lastIndexOf('/')))
        if (globs.some((parts) => glob(current, parts))) return true;
      return false;
    };
    return () => ({ patterns: list, matches });
  };
  const hidden = option(patterns?.hidden);
  const readOnly = option(patterns?.readOnly);
  return { ...(hidden ? { hiddenPatterns: hidden } : {}), ...(readOnly ? { readOnlyPatterns: readOnly } : {}) };
}

let serial = 0;
// A non-blocking FIFO read end, read as the bash tool reads its pipes (a socket over the fd).
function readAll(fd) {
  return new Promise((resolve) => {
    const chunks = [];
    const socket = new net.Socket({ fd, readable: true, writable: false });
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}
async function inHost(sandbox, host, run, attempt) {
  const names = [0, 1].map(() => join(host.pipeDirectory, 'escape-' + serial++));
  execFileSync('mkfifo', ['-m', '600', ...names]);
  const ends = names.map((name) => {
    const read = fs.openSync(name, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    return { read, write: fs.openSync(name, fs.constants.O_WRONLY) };
  });
  const outputs = ends.map((end) => readAll(end.read));
  let command;
  try {
    command = await host.run({
      file: '/bin/bash',
      args: ['-c', attempt.script],
      cwd: run.cwd,
      env: { ...process.env, ...run.env },
      stdout: names[0],
      stderr: names[1],
    });
  } finally {
    for (const end of ends) fs.closeSync(end.write);
    for (const name of names) fs.unlinkSync(name);
  }
  const timer = setTimeout(() => void command.end(0), 30000);
  const exit = await command.exited;
  clearTimeout(timer);
  await command.end(1000);
  const [stdout, stderr] = await Promise.all(outputs);
  return {
    name: attempt.name,
    output: stdout + stderr,
    code: exit.type === 'exit' ? exit.code : 'lost',
    signal: exit.type === 'exit' ? exit.signal : null,
    limitEvents: exit.limitEvents,
    limitNote: exit.limitEvents === undefined ? undefined : sandbox.explainLimits(exit.limitEvents),
  };
}

// What this process inherited (the suite checks the descriptors it handed over arrived).
const inherited = {};
for (const fd of fs.readdirSync('/proc/self/fd')) {
  try { inherited[fd] = fs.readlinkSync('/proc/self/fd/' + fd); } catch {}
}
const reports = [];
const basePath = process.env.PATH;
for (const run of input.runs) {
  process.env.PATH = [...(run.pathFirst ?? []), basePath].join(':');
  const created = createSandbox({ mode: 'required', ...run.options, ...patternOptions(run.patterns), onWarning: () => {} });
  const sandbox = run.readOnlyView ? created.readOnlyView() : created;
  const host = run.host ? sandbox.createHost() : undefined;
  const results = [];
  for (const attempt of run.attempts) {
    // A fork bomb or memory hog runs only where the sandbox bounds it.
    if (attempt.requires !== undefined && sandbox.status.limits[attempt.requires] === undefined) {
      results.push({ name: attempt.name, output: '', code: null, signal: null, planted: [], skipped: attempt.requires + ' is not bounded here' });
      continue;
    }
    const started = Date.now();
    const result = host === undefined ? await perCall(sandbox, run, attempt) : await inHost(sandbox, host, run, attempt);
    const ran = Date.now();
    // What the attempt made for the user's git or shell, as the bash tool asks after each command.
    const planted = sandbox.checkPlanted();
    results.push({ ...result, planted, unread: sandbox.plantedCheckIncomplete?.(), ms: [ran - started, Date.now() - ran] });
  }
  reports.push({ label: run.label, status: sandbox.status, description: sandbox.describe(), results, inherited, runnerPid: process.pid });
  await host?.close();
  await created.close();
}
process.stdout.write(JSON.stringify(reports));
`;

/** A directory with the runner, the built package and a node binary `user` can execute. */
export function prepareRunner(parent: string): { dir: string; node: string; entry: string } {
  const dir = fs.mkdtempSync(path.join(parent, 'runner-'));
  fs.chmodSync(dir, 0o755);
  const dist = new URL('../dist/', import.meta.url);
  for (const name of fs.readdirSync(dist)) {
    fs.copyFileSync(new URL(name, dist), path.join(dir, name));
  }
  fs.writeFileSync(path.join(dir, 'runner.mjs'), runnerSource);
  // The package's own dependency (@agent/core/regular-file), where the copy resolves it: its
  // package.json (the exports map) and its build.
  const core = fs.realpathSync(new URL('../node_modules/@agent/core/', import.meta.url));
  const coreCopy = path.join(dir, 'node_modules', '@agent', 'core');
  fs.mkdirSync(coreCopy, { recursive: true });
  fs.copyFileSync(path.join(core, 'package.json'), path.join(coreCopy, 'package.json'));
  fs.cpSync(path.join(core, 'dist'), path.join(coreCopy, 'dist'), { recursive: true });
  // The toolchain's node may sit under a home nobody can enter (/root): a copy here (never a
  // hard link: the tree is chowned to the test user, which would chown the toolchain's node).
  const node = path.join(dir, 'node');
  nodeForAnyUser(node);
  return { dir, node, entry: path.join(dir, 'index.js') };
}

/** Runs `runs` in the runner as `user`; resolves with its reports (never blocks the event loop: the proxy's HTTP server may live in this process). */
export async function runAs(
  user: RunnerUser,
  runner: { dir: string; node: string; entry: string },
  fixture: Fixture,
  runs: readonly RunnerRun[],
): Promise<RunReport[]> {
  const input = path.join(runner.dir, `input-${user.label}-${Date.now()}.json`);
  fs.writeFileSync(input, JSON.stringify({ entry: runner.entry, runs }));
  fs.chmodSync(input, 0o644);
  const command =
    user.uid === undefined
      ? [runner.node, path.join(runner.dir, 'runner.mjs'), input]
      : [
          'setpriv',
          `--reuid=${user.uid}`,
          `--regid=${user.gid ?? user.uid}`,
          '--clear-groups',
          runner.node,
          path.join(runner.dir, 'runner.mjs'),
          input,
        ];
  const entered =
    user.cgroups === undefined || user.cgroups.length === 0
      ? command
      : [
          '/bin/sh',
          '-c',
          'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"',
          'enter-cgroups',
          ...user.cgroups,
          '--',
          ...command,
        ];
  const [file = '', ...args] = entered;
  // The runner inherits descriptors as a process started by a careless launcher would (see
  // inheritedDescriptorNumbers): the outside victim file, open for appending, and the home.
  const victim = fs.openSync(path.join(fixture.outside, 'victim.txt'), 'a');
  const home = fs.openSync(fixture.home, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  const stdio: ('ignore' | 'pipe' | number)[] = ['ignore', 'pipe', 'pipe'];
  for (const [index, fd] of inheritedDescriptorNumbers.entries())
    stdio[fd] = index % 2 === 0 ? victim : home;
  for (let fd = 0; fd < stdio.length; fd++) stdio[fd] ??= 'ignore';
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(file, args, {
      cwd: fixture.base,
      env: {
        HOME: fixture.home,
        PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        TMPDIR: fixture.temporary,
      },
      stdio,
      // Under the escape suite's 25-minute set-up: some 650 attempts a user took more than the
      // 10 minutes this was at a CI's load of 20 (run85; the runner was killed, every check lost).
      timeout: 1_440_000,
    });
  } finally {
    fs.closeSync(victim);
    fs.closeSync(home);
  }
  const chunks = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  child.stdout?.on('data', (chunk: Buffer) => chunks.stdout.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => chunks.stderr.push(chunk));
  const ended = await new Promise<{ code: number | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, error }));
    child.once('close', (code) => resolve({ code }));
  });
  const stdout = Buffer.concat(chunks.stdout).toString('utf8');
  const stderr = Buffer.concat(chunks.stderr).toString('utf8');
  if (ended.code !== 0) {
    throw new Error(
      `the runner (as ${user.label}) failed: ${ended.error?.message ?? `exit ${ended.code}`}\n${stderr}`,
    );
  }
  return JSON.parse(stdout) as RunReport[];
}

/**
 * The descriptor numbers the runner inherits, alternately the outside victim file (appending)
 * and the home directory: low ones and ones above 9 (which `/bin/sh` cannot close).
 */
export const inheritedDescriptorNumbers = [3, 4, 40, 41];

/**
 * The limitations that concern what a command can reach, not how much it may use (memory, and
 * root's processes, where no cgroup can be made: resource-limits.test.ts).
 */
export function containmentLimitations(limitations: readonly string[]): string[] {
  return limitations.filter((entry) => !/^(memory|processes) (is|are) NOT bounded/.test(entry));
}
