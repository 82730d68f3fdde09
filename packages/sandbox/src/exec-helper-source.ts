/**
 * The exec helper: a small Node program that runs inside a long-lived sandbox and forks each
 * command it is sent, so a command costs a fork and exec there rather than a new sandbox (see
 * sandbox-host.ts). Its source is written into each host's private directory at run time — no
 * file to find next to a bundle — and it speaks JSON lines: requests on stdin, events on stdout.
 *
 * Requests:
 * - `{ type: 'run', id, file, args, cwd, env, stdout, stderr, needle? }`: opens the two FIFOs
 *   for writing (the caller holds their read ends), starts `file` in a new session (its own
 *   process group) with stdin on /dev/null, answers `started` (with the pid inside the sandbox)
 *   or `failed`, then `exit` (`code`, `signal`) when it ends.
 * - `{ type: 'end', id, graceMs }`: ends what is left of the command — its group gets SIGTERM,
 *   then SIGKILL after `graceMs`; every process whose environment holds `needle` (descendants
 *   that left the group) gets SIGKILL — and, once no command runs, every process started since
 *   the helper did (one that left the group *and* cleared its environment); answers `ended`
 *   when they are gone. A command of which nothing is left when it exits is over at once: its
 *   `exit` event says `over: true`, and no `end` is needed.
 *
 * End of stdin (the owner closed it, or died) kills everything the helper started and exits.
 * Written as plain JavaScript (CommonJS: a `.cjs` file) with no dependencies.
 *
 * Each command starts with oom_score_adj 1000: the memory cgroup's out-of-memory killer ends a
 * command before the helper (and with it every command of the session).
 *
 * Arguments: the pid namespace of the process that started it (`pid:[…]`, or '' when unknown),
 * then none, or `perl wrapper` — then each command is started through
 * `perl wrapper file args…` (command-confinement.ts), which puts it in a Landlock domain of its
 * own before it execs: the command can then neither trace, read nor signal this helper. The
 * command's environment goes to the wrapper over descriptor 3 (perl itself runs with none), and
 * the wrapper's answer there says whether the exec worked: `started` waits for it.
 */
export const execHelperSource = String.raw`'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');

const calls = new Map();
const self = process.pid;
const [hostPidNamespace, perl, wrapper] = process.argv.slice(2);
const confined = typeof perl === 'string' && perl !== '' && typeof wrapper === 'string';

function send(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

function pids() {
  const found = [];
  for (const entry of fs.readdirSync('/proc')) {
    const code = entry.charCodeAt(0);
    if (code >= 48 && code <= 57) found.push(Number(entry));
  }
  return found;
}

// What runs here before any command (the sandbox's init, a proxy relay, this helper) is never swept.
const baseline = new Set(pids());

// Whether every process this helper sees is the sandbox's: it runs in a pid namespace of its own,
// not its starter's. Only then is a process started after it one of the commands' (a daemon that
// left its group). Started without one (a test's unconfined helper), the machine's new processes
// are everyone's: the sweep SIGKILLed other test suites' tmux, git and rg as "strays".
const ownPidNamespace = (() => {
  try {
    const namespace = fs.readlinkSync('/proc/self/ns/pid');
    return typeof hostPidNamespace === 'string' && hostPidNamespace !== '' && namespace !== hostPidNamespace;
  } catch {
    return false;
  }
})();

function stat(pid) {
  try {
    const text = fs.readFileSync('/proc/' + pid + '/stat', 'latin1');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ', 3);
    return { state: fields[0], group: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

function running(pid) {
  const info = stat(pid);
  return info !== undefined && info.state !== 'Z' && info.state !== 'X';
}

function groupRunning(group) {
  try {
    process.kill(-group, 0);
  } catch {
    return false;
  }
  // A zombie does not count: init reaps orphans, maybe a moment later.
  for (const pid of pids()) {
    const info = stat(pid);
    if (info !== undefined && info.group === group && info.state !== 'Z' && info.state !== 'X') return true;
  }
  return false;
}

function kill(target, signal) {
  try {
    process.kill(target, signal);
  } catch {
    // Already gone.
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitGone(list, ms) {
  const deadline = Date.now() + ms;
  while (list.some(running) && Date.now() < deadline) await sleep(5);
}

function marked(needle) {
  const found = [];
  for (const pid of pids()) {
    if (pid === self || baseline.has(pid)) continue;
    try {
      if (fs.readFileSync('/proc/' + pid + '/environ', 'latin1').includes(needle)) found.push(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

function strays() {
  if (!ownPidNamespace) return [];
  return pids().filter((pid) => pid !== self && !baseline.has(pid) && running(pid));
}

// The write end of a FIFO whose reader is the owner. A blocking open would wait for a reader
// forever (and this helper with it) had the owner closed its end; a non-blocking one fails at
// once (ENXIO) then, but the command must not inherit O_NONBLOCK (its writes would fail with
// EAGAIN): once a reader is known to be there, the FIFO is opened again, blocking, through
// /proc/self/fd — at once, as it has a reader.
function openWriteEnd(file) {
  const probe = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  try {
    return fs.openSync('/proc/self/fd/' + probe, fs.constants.O_WRONLY);
  } finally {
    fs.closeSync(probe);
  }
}

// The command's environment as the wrapper reads it: NAME=value entries, each ended by a NUL.
function environmentPayload(env) {
  let payload = '';
  for (const [name, value] of Object.entries(env || {})) {
    if (value === undefined) continue;
    const entry = name + '=' + String(value);
    if (entry.includes('\0')) {
      const error = new TypeError('The environment variable ' + name + ' holds a NUL byte');
      error.code = 'ERR_INVALID_ARG_VALUE';
      throw error;
    }
    payload += entry + '\0';
  }
  return payload;
}

// The out-of-memory killer's first choice is a command, never this helper (files in /tmp are
// nobody's resident memory, so the helper was the largest process): raising a score needs no
// privilege, lowering this helper's would. The wrapper raises it before the exec; without it,
// here, just after (what the command started in between keeps its parent's score).
function raiseScore(pid) {
  try {
    fs.writeFileSync('/proc/' + pid + '/oom_score_adj', '1000');
  } catch {
    // Gone already, or no /proc/N/oom_score_adj here.
  }
}

function start(request, fds, payload) {
  if (payload === undefined) {
    const child = spawn(request.file, request.args, {
      cwd: request.cwd,
      env: request.env,
      detached: true,
      stdio: ['ignore', fds[0], fds[1]],
    });
    if (child.pid !== undefined) raiseScore(child.pid);
    return child;
  }
  return spawn(perl, [wrapper, request.file, ...request.args], {
    cwd: request.cwd,
    env: {},
    detached: true,
    stdio: ['ignore', fds[0], fds[1], 'pipe'],
  });
}

// Resolves with undefined once the wrapper exec'd the command (descriptor 3 closed on exec), or
// with the errno of the exec that failed.
function execResult(child, payload) {
  if (payload === undefined) return Promise.resolve(undefined);
  const channel = child.stdio[3];
  let answer = '';
  channel.setEncoding('utf8');
  channel.on('data', (chunk) => {
    answer += chunk;
  });
  channel.on('error', () => {});
  channel.end(payload);
  return new Promise((resolve) => {
    channel.once('close', () => resolve(answer === '' ? undefined : Number.parseInt(answer, 10)));
  });
}

function errnoName(errno) {
  for (const [name, value] of Object.entries(os.constants.errno)) if (value === errno) return name;
  return 'E' + errno;
}

function run(request) {
  const call = { pid: undefined, needle: request.needle, exited: undefined, ending: undefined, reaped: false };
  calls.set(request.id, call);
  const fds = [];
  let child;
  let payload;
  try {
    payload = confined ? environmentPayload(request.env) : undefined;
    fds.push(openWriteEnd(request.stdout));
    fds.push(openWriteEnd(request.stderr));
    child = start(request, fds, payload);
  } catch (error) {
    for (const fd of fds) fs.closeSync(fd);
    calls.delete(request.id);
    send({ type: 'failed', id: request.id, message: String(error && error.message), code: error && error.code });
    return;
  }
  for (const fd of fds) fs.closeSync(fd);
  let failed = false;
  child.once('error', (error) => {
    if (call.pid !== undefined || failed) return;
    failed = true;
    calls.delete(request.id);
    send({ type: 'failed', id: request.id, message: String(error && error.message), code: error && error.code });
  });
  if (child.pid === undefined) return;
  const ended = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      call.reaped = true;
      resolve({ code, signal });
    }),
  );
  void execResult(child, payload).then((errno) => {
    if (failed) return;
    if (errno !== undefined) {
      failed = true;
      calls.delete(request.id);
      const code = errnoName(errno);
      send({ type: 'failed', id: request.id, message: 'spawn ' + request.file + ' ' + code, code });
      return;
    }
    call.pid = child.pid;
    send({ type: 'started', id: request.id, pid: child.pid });
    call.exited = ended.then(({ code, signal }) => {
      // Nothing of it left (the usual case): it is over now, and the owner need not ask to end it.
      if (call.ending === undefined && isOver(call)) {
        calls.delete(request.id);
        send({ type: 'exit', id: request.id, code, signal, over: true });
      } else send({ type: 'exit', id: request.id, code, signal });
    });
  });
}

// Whether nothing of a command that exited runs any more: its group is empty, nothing carries its
// marker, and — when it is the only command — nothing else was started since the helper was.
function isOver(call) {
  if (ownGroupRunning(call)) return false;
  if (typeof call.needle === 'string' && call.needle !== '' && marked(call.needle).length > 0) return false;
  return calls.size > 1 || strays().length === 0;
}

// Whether the command's group still runs. Once its first process was reaped, a process at that
// pid is a newer one (the kernel gives a pid out again only when no group bears it), and a group
// of that number is the newer one's: another command's, never to be signalled as this one's.
// Any process there, a zombie too: a newer leader that exited, not yet reaped by its parent,
// still names its group, and that group's other members still run.
function ownGroupRunning(call) {
  if (newerAtPid(call)) return false;
  return groupRunning(call.pid);
}

function newerAtPid(call) {
  return call.reaped && stat(call.pid) !== undefined;
}

async function end(request) {
  const call = calls.get(request.id);
  if (call !== undefined) call.ending = true;
  if (call !== undefined && call.pid !== undefined) {
    const group = call.pid;
    if (ownGroupRunning(call)) {
      kill(-group, 'SIGTERM');
      const deadline = Date.now() + request.graceMs;
      while (ownGroupRunning(call) && Date.now() < deadline) await sleep(10);
      if (ownGroupRunning(call)) kill(-group, 'SIGKILL');
      const gone = Date.now() + 1000;
      while (ownGroupRunning(call) && Date.now() < gone) await sleep(5);
    }
    // Its exit is reported before it is said to be over (the group may look empty first).
    await call.exited;
    if (typeof call.needle === 'string' && call.needle !== '') {
      const escaped = marked(call.needle);
      for (const pid of escaped) kill(pid, 'SIGKILL');
      await waitGone(escaped, 1000);
    }
  }
  calls.delete(request.id);
  if (calls.size === 0) {
    const left = strays();
    for (const pid of left) kill(pid, 'SIGKILL');
    await waitGone(left, 1000);
  }
  send({ type: 'ended', id: request.id });
}

function shutdown() {
  for (const call of calls.values()) {
    if (call.pid !== undefined && !newerAtPid(call)) kill(-call.pid, 'SIGKILL');
  }
  for (const pid of strays()) kill(pid, 'SIGKILL');
  process.exit(0);
}

let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  let newline = pending.indexOf('\n');
  while (newline !== -1) {
    const line = pending.slice(0, newline);
    pending = pending.slice(newline + 1);
    newline = pending.indexOf('\n');
    if (line === '') continue;
    const request = JSON.parse(line);
    if (request.type === 'run') run(request);
    else if (request.type === 'end') void end(request);
  }
});
process.stdin.on('end', shutdown);
process.stdin.on('error', shutdown);
send({ type: 'ready', pid: self });
`;
