import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';

// Killing an interpreter's process group is not enough: a cell can start a process that leaves the
// group (`setsid`, `detached: true`, a double fork), and an interpreter with a thread or timer
// of its own keeps running after the agent exits and its stdin closes. Outside a sandbox (whose
// PID namespace ends with it) those outlived a reset, `close()` and the agent itself. Each
// interpreter gets a marker in its environment, inherited by everything it starts; a reset
// kills the group and every process carrying the marker, and the agent's exit kills every
// interpreter group and marked process it left. Linux only (`/proc`), best effort: a process
// that starts a child with a cleaned environment (`env -i`) hides it, as from bash's own sweep.

/** The variable carrying an interpreter's marker (not a name the credential filter drops). */
export const replMarkerVariable = 'AGENT_TOOLS_REPL_RUN';

/** Every marker of this process starts with this, then `.` and the interpreter's own id. */
const processMarker = randomUUID();

/** A new interpreter's marker: its own, and recognisably this process's. */
export function newReplMarker(): string {
  return `${processMarker}.${randomUUID()}`;
}

/** Interpreters whose process groups run now (each leads its own), for the exit. */
const runningGroups = new Set<ChildProcess>();
let exitHandlerInstalled = false;

/** Records a running interpreter group; the agent's exit kills it and every marked process. */
export function trackInterpreter(interpreter: ChildProcess): void {
  if (!exitHandlerInstalled) {
    exitHandlerInstalled = true;
    process.once('exit', killAllAtExit);
  }
  runningGroups.add(interpreter);
}

/** The interpreter group ended (it was killed or exited). */
export function untrackInterpreter(interpreter: ChildProcess): void {
  runningGroups.delete(interpreter);
}

/**
 * SIGKILLs the process group the interpreter leads (started detached), while that group can
 * still be its own. The number alone is never signalled, and `-pid` is not either once the
 * interpreter was reaped and a process exists at its pid: the kernel hands a pid out again only
 * when no process bears it as its group id either, so that process is a newer one, our group
 * is empty and group `pid` is the newer one's (pid_max 32,768 wraps within minutes on a busy
 * machine). Node sets `exitCode` / `signalCode` as it reaps, before any 'exit' listener runs.
 * (A few lines like tools-builtin's process-group.ts: packages share code only through
 * @agent/core, which must not import node:fs.)
 */
export function killGroup(interpreter: ChildProcess): void {
  const pid = interpreter.pid;
  if (pid === undefined) return;
  const reaped = interpreter.exitCode !== null || interpreter.signalCode !== null;
  if (reaped && fs.existsSync(`/proc/${pid}`)) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** SIGKILLs every process carrying `marker` (what the interpreter started outside its group). */
export function killMarked(marker: string): number[] {
  return killWhereEnvironmentHas(`${replMarkerVariable}=${marker}\0`);
}

function killAllAtExit(): void {
  for (const interpreter of runningGroups) killGroup(interpreter);
  runningGroups.clear();
  killWhereEnvironmentHas(`${replMarkerVariable}=${processMarker}.`);
}

function killWhereEnvironmentHas(needle: string): number[] {
  const killed: number[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return killed;
  }
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      // Sync: this also runs in an 'exit' handler, where nothing asynchronous happens.
      if (!fs.readFileSync(`/proc/${entry}/environ`, 'latin1').includes(needle)) continue;
      process.kill(pid, 'SIGKILL');
      killed.push(pid);
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return killed;
}
