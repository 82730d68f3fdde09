import * as fs from 'node:fs';
import * as path from 'node:path';
import { processExists } from './abandoned-directories.js';
import {
  type CgroupController,
  type CgroupPlace,
  cgroupName,
  cgroupPrefix,
  currentCgroupFacts,
  limitFile,
  pidNamespace,
  prepareCgroupPlaces,
} from './cgroup-places.js';
import { systemShellOptions } from './outside-shells.js';

/** The limits a sandbox's cgroups set; undefined lifts one. */
export interface CgroupLimitValues {
  maxProcesses?: number;
  /** Bytes; memory and swap together. */
  maxMemoryBytes?: number;
}

/** Which limit a command ran into, read from its cgroup's event counters. */
export interface LimitEvents {
  /** Processes the kernel's out-of-memory killer ended in the cgroup. */
  memoryKills: number;
  /** Forks (and thread starts) the pids limit refused. */
  refusedForks: number;
}

/** A program and its arguments. */
interface Invocation {
  file: string;
  args: string[];
}

/** One command's (or one long-lived sandbox's) cgroup: a child in each place. */
export interface CommandCgroup {
  /** `invocation` started through a shell that first moves itself into the cgroup. */
  enter(invocation: Invocation): Invocation;
  /** The counters since the cgroup was made. */
  events(): LimitEvents;
  /** Kills what is left in it and removes it; resolves once it is gone. Idempotent. */
  release(): Promise<void>;
}

/** The cgroups of one sandbox. */
export interface CgroupLimits {
  /** What is bounded, by which mechanism: `cgroup v1` / `cgroup v2`. */
  readonly mechanism: string;
  readonly controllers: readonly CgroupController[];
  /** A new cgroup with the limits set. Throws when it cannot be made (the command must not start). */
  create(): CommandCgroup;
  /** Releases every cgroup still made (and waits for the sweep of those killed owners left). */
  releaseAll(): Promise<void>;
  /**
   * Releases the cgroups no process is in any more that were made a while ago: those of
   * commands whose caller never released them (it spawns what `wrap()` returned and may not
   * say when it ended). Recent ones are kept: their command may not have been spawned yet.
   */
  releaseIdle(): void;
}

let sequence = 0;
/** Cgroups not removed yet, for the exit handler. */
const live = new Set<Cell>();
let exitHandlerInstalled = false;

interface Cell {
  directories: { place: CgroupPlace; directory: string }[];
  released: boolean;
  /** Date.now() when made. */
  createdAt: number;
}

/** A cgroup older than this with no process in it is over (a spawn takes milliseconds). */
const idleAfterMs = 60_000;

/**
 * Cgroups for a sandbox with these limits, where this machine lets this process make them;
 * else undefined and, per controller, why not.
 */
export function cgroupLimits(values: CgroupLimitValues): {
  limits?: CgroupLimits;
  missing: Partial<Record<CgroupController, string>>;
} {
  const controllers: CgroupController[] = [
    ...(values.maxProcesses === undefined ? [] : (['pids'] as const)),
    ...(values.maxMemoryBytes === undefined ? [] : (['memory'] as const)),
  ];
  if (controllers.length === 0) return { missing: {} };
  const facts = currentCgroupFacts();
  if (facts === undefined) {
    const why = 'this system has no /proc/self/cgroup';
    return { missing: Object.fromEntries(controllers.map((controller) => [controller, why])) };
  }
  const { places, missing } = placesFor(controllers);
  if (places.length === 0) return { missing };
  // In the background: what a killed owner left may take a moment to die. releaseAll waits for it.
  const swept = Promise.all(places.map((place) => sweepAbandoned(place)));
  const versions = [...new Set(places.map((place) => place.version))];
  // This sandbox's own cgroups: releaseAll ends those, not another sandbox's.
  const owned = new Set<Cell>();
  const limits: CgroupLimits = {
    mechanism: versions.map((version) => `cgroup v${version}`).join(' + '),
    controllers: places.flatMap((place) => place.controllers),
    create: () => createCgroup(places, values, owned),
    releaseAll: async () => {
      await Promise.all([swept, ...[...owned].map((cell) => releaseCell(cell, owned))]);
    },
    releaseIdle: () => {
      const before = Date.now() - idleAfterMs;
      for (const cell of owned) {
        if (cell.createdAt > before) continue;
        if (cell.directories.every(({ directory }) => members(directory).length === 0)) {
          releaseNow(cell);
          if (cell.released) owned.delete(cell);
        }
      }
    },
  };
  return { limits, missing };
}

/**
 * Found once per process, for both controllers whichever a sandbox wants: preparing v2 may move
 * this process into a leaf, which must happen once.
 */
let prepared: ReturnType<typeof prepareCgroupPlaces> | undefined;

function placesFor(controllers: CgroupController[]): ReturnType<typeof prepareCgroupPlaces> {
  if (prepared === undefined) {
    const facts = currentCgroupFacts();
    prepared =
      facts === undefined
        ? { places: [], missing: {} }
        : prepareCgroupPlaces(facts, ['pids', 'memory']);
  }
  const places = prepared.places
    .map((place) => ({
      ...place,
      controllers: place.controllers.filter((controller) => controllers.includes(controller)),
    }))
    .filter((place) => place.controllers.length > 0);
  const missing: Partial<Record<CgroupController, string>> = {};
  for (const controller of controllers) {
    const why = prepared.missing[controller];
    if (why !== undefined) missing[controller] = why;
  }
  return { places, missing };
}

function createCgroup(
  places: readonly CgroupPlace[],
  values: CgroupLimitValues,
  owned: Set<Cell>,
): CommandCgroup {
  const name = cgroupName(process.pid, String(sequence++));
  const cell: Cell = { directories: [], released: false, createdAt: Date.now() };
  live.add(cell);
  owned.add(cell);
  installExitHandler();
  try {
    for (const place of places) {
      const directory = path.join(place.directory, name);
      fs.mkdirSync(directory);
      cell.directories.push({ place, directory });
      setLimits(directory, place, values);
    }
  } catch (error) {
    releaseNow(cell);
    owned.delete(cell);
    throw new Error(
      `the sandbox could not make its cgroup (${error instanceof Error ? error.message : String(error)}); the command was not started`,
    );
  }
  const before = readEvents(cell);
  let releasing: Promise<void> | undefined;
  const cgroup: CommandCgroup = {
    enter: (invocation) => enterThrough(cell, invocation),
    events: () => {
      const now = readEvents(cell);
      return {
        memoryKills: now.memoryKills - before.memoryKills,
        refusedForks: now.refusedForks - before.refusedForks,
      };
    },
    release: () => {
      releasing ??= releaseCell(cell, owned);
      return releasing;
    },
  };
  return cgroup;
}

function write(file: string, value: string): void {
  // r+: a file that is not there is an error, never a new regular file.
  fs.writeFileSync(file, value, { flag: 'r+' });
}

function setLimits(directory: string, place: CgroupPlace, values: CgroupLimitValues): void {
  for (const controller of place.controllers) {
    const value = controller === 'pids' ? values.maxProcesses : values.maxMemoryBytes;
    if (value === undefined) continue;
    write(path.join(directory, limitFile(controller, place.version)), String(value));
    if (controller !== 'memory') continue;
    // Swap too: without it, a command's pages (and its tmpfs files) would move to swap and on.
    if (place.version === 2) {
      const swap = path.join(directory, 'memory.swap.max');
      if (fs.existsSync(swap)) write(swap, '0');
    } else {
      const both = path.join(directory, 'memory.memsw.limit_in_bytes');
      if (fs.existsSync(both)) write(both, String(value));
    }
  }
}

/**
 * A shell that writes its own pid into every `cgroup.procs` of the cell and only then execs
 * `invocation`: nothing of the command runs outside the cgroup, not even for a moment. One it
 * cannot enter ends the start (exit 125) — fail closed.
 */
function enterThrough(cell: Cell, invocation: Invocation): Invocation {
  const script =
    'while [ "$1" != -- ]; do echo $$ > "$1" || { echo "agent-sandbox: cannot enter the cgroup $1; not starting the command" >&2; exit 125; }; shift; done; shift; exec "$@"';
  return {
    file: '/bin/sh',
    args: [
      ...systemShellOptions(),
      '-c',
      script,
      'agent-sandbox-cgroup',
      ...cell.directories.map(({ directory }) => path.join(directory, 'cgroup.procs')),
      '--',
      invocation.file,
      ...invocation.args,
    ],
  };
}

function readNumber(file: string, key: string): number {
  try {
    const match = new RegExp(`^${key} (\\d+)$`, 'm').exec(fs.readFileSync(file, 'utf8'));
    return match?.[1] === undefined ? 0 : Number(match[1]);
  } catch {
    return 0;
  }
}

function readEvents(cell: Cell): LimitEvents {
  let memoryKills = 0;
  let refusedForks = 0;
  for (const { place, directory } of cell.directories) {
    if (place.controllers.includes('memory')) {
      memoryKills += readNumber(
        path.join(directory, place.version === 2 ? 'memory.events' : 'memory.oom_control'),
        'oom_kill',
      );
    }
    if (place.controllers.includes('pids'))
      refusedForks += readNumber(path.join(directory, 'pids.events'), 'max');
  }
  return { memoryKills, refusedForks };
}

function members(directory: string): number[] {
  try {
    return fs
      .readFileSync(path.join(directory, 'cgroup.procs'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * Ends every process left in the cell: v2's `cgroup.kill` where there is one; else no new
 * process may start (pids.max 0), then each is SIGKILLed — a fork bomb cannot outrun it.
 */
function killMembers(cell: Cell): void {
  for (const { place, directory } of cell.directories) {
    const kill = path.join(directory, 'cgroup.kill');
    if (place.version === 2 && fs.existsSync(kill)) {
      try {
        write(kill, '1');
        continue;
      } catch {
        // Fall through to one at a time.
      }
    }
    if (place.controllers.includes('pids')) {
      try {
        write(path.join(directory, 'pids.max'), '0');
      } catch {
        // Gone already.
      }
    }
    const name = path.basename(directory);
    for (const pid of members(directory)) {
      // Still ours when signalled: a process that exited since the list was read may have left
      // its pid to another one, outside the cgroup.
      if (!inCgroup(pid, name)) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  }
}

/** Whether `/proc/<pid>/cgroup` names a cgroup called `name` (ours are uniquely named). */
function inCgroup(pid: number, name: string): boolean {
  try {
    return fs
      .readFileSync(`/proc/${pid}/cgroup`, 'utf8')
      .split('\n')
      .some((line) => line.endsWith(`/${name}`));
  } catch {
    return false;
  }
}

function removeEmpty(cell: Cell): boolean {
  cell.directories = cell.directories.filter(({ directory }) => {
    try {
      fs.rmdirSync(directory);
      return false;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code !== 'ENOENT';
    }
  });
  return cell.directories.length === 0;
}

/** How long a release waits for the kernel to reap what it killed before giving up. */
const releaseTimeoutMs = 5_000;

async function releaseCell(cell: Cell, owned: Set<Cell>): Promise<void> {
  if (cell.released) return;
  const deadline = Date.now() + releaseTimeoutMs;
  for (let round = 0; ; round++) {
    killMembers(cell);
    if (removeEmpty(cell) || Date.now() > deadline) break;
    // Killed processes leave the cgroup when the kernel has torn them down: a few ms.
    await new Promise((resolve) => setTimeout(resolve, Math.min(2 ** round, 50)));
  }
  cell.released = cell.directories.length === 0;
  if (cell.released) {
    live.delete(cell);
    owned.delete(cell);
  }
}

/** The synchronous best effort of the exit handler (a later sweep removes what is left). */
function releaseNow(cell: Cell): void {
  killMembers(cell);
  removeEmpty(cell);
  cell.released = cell.directories.length === 0;
  if (cell.released) live.delete(cell);
}

function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.once('exit', () => {
    for (const cell of live) releaseNow(cell);
  });
}

/**
 * Removes the cgroups in `place` that a process of this pid namespace no longer running made
 * (killed before its exit handler ran), and ends what still runs in them: an owner killed while
 * a sandbox was starting, before bubblewrap had set up `--die-with-parent`, leaves it running. A `-self` leaf (cgroup v2) is removed only when empty: what its
 * owner started unsandboxed is not ours to end. Never our own.
 */
async function sweepAbandoned(place: CgroupPlace): Promise<void> {
  let entries: string[];
  try {
    entries = fs.readdirSync(place.directory);
  } catch {
    return;
  }
  const pattern = new RegExp(`^${cgroupPrefix}(\\d+)-(\\d+|probe\\d+|self)-${pidNamespace}$`);
  const abandoned: Promise<void>[] = [];
  for (const entry of entries) {
    const match = pattern.exec(entry);
    const owner = Number(match?.[1]);
    if (match === null || owner === process.pid || processExists(owner)) continue;
    const directory = path.join(place.directory, entry);
    if (match[2] === 'self') {
      try {
        fs.rmdirSync(directory);
      } catch {
        // Still in use.
      }
      continue;
    }
    const cell: Cell = { directories: [{ place, directory }], released: false, createdAt: 0 };
    abandoned.push(releaseCell(cell, new Set()));
  }
  await Promise.all(abandoned);
}
