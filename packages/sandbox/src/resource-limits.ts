import * as fs from 'node:fs';
import * as os from 'node:os';
import { type CgroupLimits, cgroupLimits, type LimitEvents } from './cgroup-limits.js';
import { currentCgroupFacts, ownCgroups } from './cgroup-places.js';

/** What a sandbox bounds, and how (see `SandboxStatus.limits`). */
export interface SandboxLimits {
  /** Processes and threads at once, all commands together; undefined when not bounded. */
  maxProcesses?: number;
  /** Bytes of memory (and swap), tmpfs files included; undefined when not bounded. */
  maxMemoryBytes?: number;
  /** Bytes one file may grow to (RLIMIT_FSIZE); undefined when not bounded. */
  maxFileBytes?: number;
  /**
   * Bytes of private memory each process may map (RLIMIT_DATA), where no memory cgroup bounds
   * them together: `maxMemoryBytes`, at least 1 GiB (Node needs ~640 MiB of address space to
   * start); undefined elsewhere.
   */
  maxProcessDataBytes?: number;
  /**
   * `cgroup v1` / `cgroup v2`: a cgroup per command (per long-lived sandbox) holds both;
   * `rlimit`: RLIMIT_NPROC only (no cgroup could be made; memory not bounded); `none`.
   */
  mechanism: 'cgroup v1' | 'cgroup v2' | 'cgroup v2 + cgroup v1' | 'rlimit' | 'none';
}

/** What a command ran into, counted by its cgroup (zero where nothing bounds it). */
export type SandboxLimitEvents = LimitEvents;

/** The limits of one sandbox as decided when it is created. */
export interface ResourceLimits {
  status: SandboxLimits;
  /**
   * RLIMIT_NPROC to set inside (not for root, whom the kernel exempts): the limit itself without
   * a pids cgroup; with one, a backstop above it, so the cgroup refuses first and its counter
   * explains the refusal (an rlimit refusal leaves no trace to explain).
   */
  processRlimit?: number;
  /** RLIMIT_FSIZE to set inside, in bytes (root too). */
  fileBytes?: number;
  /** RLIMIT_DATA to set inside, in bytes (root too), where no memory cgroup can be made. */
  dataBytes?: number;
  /**
   * `maxMemoryBytes` where no memory cgroup bounds it: what the in-memory file systems may hold
   * together (see `MountPlan.tmpfsBytes`), so that at least their files stay within it.
   */
  tmpfsBytes?: number;
  cgroups?: CgroupLimits;
  /** What cannot be bounded here, each with the reason. */
  limitations: string[];
  /** The part of `describe()` that says what is bounded. */
  describe(): string;
  /** A note for a command that ran into a limit, else undefined. */
  explain(events: LimitEvents): string | undefined;
}

/** The default of `maxProcesses`: far above a build's, far below a machine's. */
export const defaultMaxProcesses = 4096;
/** Below this a shell and a few tools could not start. */
const minimumMaxProcesses = 16;
/** Below this bubblewrap and a shell could not start. */
const minimumMaxMemoryBytes = 16 * 1024 * 1024;

/**
 * The default of `maxMemoryBytes`: half of the memory this process may use (the machine's, or
 * its own cgroup's limit when lower — a container's). Enough for a large build or test run,
 * while a runaway command — or a file filling the in-memory `/tmp` — leaves the other half to
 * the agent and everything else on the machine.
 */
export function defaultMaxMemoryBytes(): number {
  let available = os.totalmem();
  const facts = currentCgroupFacts();
  if (facts !== undefined) {
    const own = ownCgroups(facts);
    const candidates = [
      ...(own.unified === undefined ? [] : [`${own.unified}/memory.max`]),
      ...(own.v1.memory === undefined ? [] : [`${own.v1.memory}/memory.limit_in_bytes`]),
    ];
    for (const file of candidates) {
      try {
        const limit = Number(fs.readFileSync(file, 'utf8').trim());
        if (Number.isSafeInteger(limit) && limit > 0 && limit < available) available = limit;
      } catch {
        // No such limit.
      }
    }
  }
  return Math.floor(available / 2 / 1024 / 1024) * 1024 * 1024;
}

/**
 * The least RLIMIT_DATA set where no memory cgroup can be made: Node 24 reserves its code range
 * and heap at start and failed below ~640 MiB (`Failed to reserve virtual memory for CodeRange`);
 * python3, git, rg and Go programs started with 64 MiB.
 */
export const minimumProcessDataBytes = 1024 ** 3;

/** Below this a build could not write its ordinary files. */
const minimumMaxFileBytes = 1024 * 1024;

/**
 * The default of `maxFileBytes`: half of the space free on `root`'s file system now (one file
 * never fills it), at least 1 GiB; 64 GiB where it cannot be told.
 */
export function defaultMaxFileBytes(root: string | undefined): number {
  const floor = 1024 ** 3;
  if (root === undefined) return 64 * 1024 ** 3;
  try {
    const space = fs.statfsSync(root);
    const half = Math.floor((space.bavail * space.bsize) / 2);
    return Math.max(floor, Math.floor(half / 1024 ** 2) * 1024 ** 2);
  } catch {
    return 64 * 1024 ** 3;
  }
}

/** `1.5 GiB`, `64 MiB`. */
export function formatBytes(bytes: number): string {
  const gib = bytes / 1024 ** 3;
  if (gib >= 1) return `${Number.isInteger(gib) ? gib : gib.toFixed(1)} GiB`;
  return `${Math.round(bytes / 1024 ** 2)} MiB`;
}

function checkLimit(name: string, value: number, minimum: number, unit: string): void {
  if (value === Number.POSITIVE_INFINITY) return;
  if (!Number.isSafeInteger(value) || value < minimum) {
    throw new TypeError(
      `sandbox ${name}: expected an integer of at least ${minimum}${unit} or Infinity, got ${String(value)}`,
    );
  }
}

/**
 * How far above a pids cgroup's limit RLIMIT_NPROC is set where both apply. Both count the
 * sandbox's processes and threads; which refuses a fork first was a race (the official CI saw the
 * rlimit win as nobody in a delegated cgroup, and the refusal went unexplained).
 */
export const rlimitBackstopMargin = 16;

/**
 * Decides a sandbox's limits: a cgroup per command (pids.max, memory.max) where this process
 * may make one (`cgroups: 'auto'`), RLIMIT_NPROC inside the sandbox as well (for all but root),
 * and a limitation line for each thing left unbounded.
 */
export function resourceLimits(options: {
  maxProcesses?: number;
  maxMemoryBytes?: number;
  maxFileBytes?: number;
  cgroups?: 'auto' | 'off';
  active: boolean;
  /** The writable roots: the default file size is judged on the first one's file system. */
  roots?: readonly string[];
}): ResourceLimits {
  const maxProcesses = options.maxProcesses ?? defaultMaxProcesses;
  checkLimit('maxProcesses', maxProcesses, minimumMaxProcesses, '');
  if (options.maxMemoryBytes !== undefined)
    checkLimit('maxMemoryBytes', options.maxMemoryBytes, minimumMaxMemoryBytes, ' (16 MiB)');
  if (options.maxFileBytes !== undefined)
    checkLimit('maxFileBytes', options.maxFileBytes, minimumMaxFileBytes, ' (1 MiB)');
  const requestedFile = options.maxFileBytes ?? defaultMaxFileBytes(options.roots?.[0]);
  const fileBytes = requestedFile === Number.POSITIVE_INFINITY ? undefined : requestedFile;
  const cgroupsWanted = options.cgroups ?? 'auto';
  if (cgroupsWanted !== 'auto' && cgroupsWanted !== 'off') {
    throw new TypeError(`sandbox cgroups: expected auto or off, got ${String(cgroupsWanted)}`);
  }
  const processes = maxProcesses === Number.POSITIVE_INFINITY ? undefined : maxProcesses;
  const requestedMemory = options.maxMemoryBytes ?? defaultMaxMemoryBytes();
  const memory = requestedMemory === Number.POSITIVE_INFINITY ? undefined : requestedMemory;
  // Root is exempt from RLIMIT_NPROC (the kernel checks the user, not a capability).
  const isRoot = process.getuid?.() === 0;
  const processRlimit = isRoot ? undefined : processes;
  const limitations: string[] = [];
  if (!options.active) {
    return {
      status: { mechanism: 'none' },
      limitations,
      describe: () => '',
      explain: () => undefined,
    };
  }
  const found =
    cgroupsWanted === 'off'
      ? {
          missing: {
            ...(processes === undefined ? {} : { pids: 'cgroups: off' }),
            ...(memory === undefined ? {} : { memory: 'cgroups: off' }),
          },
        }
      : cgroupLimits({
          ...(processes === undefined ? {} : { maxProcesses: processes }),
          ...(memory === undefined ? {} : { maxMemoryBytes: memory }),
        });
  const cgroups = 'limits' in found ? found.limits : undefined;
  const bounded = {
    processes: cgroups?.controllers.includes('pids') === true ? processes : processRlimit,
    memory: cgroups?.controllers.includes('memory') === true ? memory : undefined,
  };
  if (processes !== undefined && bounded.processes === undefined) {
    limitations.push(
      `processes are NOT bounded: root is exempt from RLIMIT_NPROC and no pids cgroup can be made here (${found.missing.pids}); a fork bomb can take every process id until the command is ended`,
    );
  }
  // Where the cgroup could not be made (not where the caller chose none): RLIMIT_DATA bounds each
  // process's private memory — a runaway one stops with ENOMEM instead of taking the machine.
  const dataBytes =
    memory !== undefined && bounded.memory === undefined && cgroupsWanted === 'auto'
      ? Math.max(memory, minimumProcessDataBytes)
      : undefined;
  if (memory !== undefined && bounded.memory === undefined) {
    const perProcess =
      dataBytes === undefined
        ? ''
        : ` as a whole: each process's private memory is held to ${formatBytes(dataBytes)} (RLIMIT_DATA), but many processes together, or memory they map shared, are not`;
    limitations.push(
      `memory is NOT bounded: no memory cgroup can be made here (${found.missing.memory})${perProcess}; a command can take the machine's memory (the files it writes to its in-memory /tmp, /dev/shm and /run are kept within ${formatBytes(memory)} where bubblewrap can size them)`,
    );
  }
  const mechanism: SandboxLimits['mechanism'] =
    cgroups !== undefined
      ? (cgroups.mechanism as SandboxLimits['mechanism'])
      : processRlimit !== undefined
        ? 'rlimit'
        : 'none';
  const status: SandboxLimits = {
    mechanism,
    ...(bounded.processes === undefined ? {} : { maxProcesses: bounded.processes }),
    ...(bounded.memory === undefined ? {} : { maxMemoryBytes: bounded.memory }),
    ...(fileBytes === undefined ? {} : { maxFileBytes: fileBytes }),
    ...(dataBytes === undefined ? {} : { maxProcessDataBytes: dataBytes }),
  };
  return {
    status,
    ...(processRlimit === undefined
      ? {}
      : {
          processRlimit:
            cgroups?.controllers.includes('pids') === true
              ? processRlimit + rlimitBackstopMargin
              : processRlimit,
        }),
    ...(fileBytes === undefined ? {} : { fileBytes }),
    ...(dataBytes === undefined ? {} : { dataBytes }),
    ...(memory !== undefined && bounded.memory === undefined ? { tmpfsBytes: memory } : {}),
    ...(cgroups === undefined ? {} : { cgroups }),
    limitations,
    describe() {
      const bounds = [
        ...(bounded.processes === undefined ? [] : [`at most ${bounded.processes} processes`]),
        ...(bounded.memory === undefined ? [] : [`${formatBytes(bounded.memory)} of memory`]),
      ];
      const unbounded = [
        ...(processes !== undefined && bounded.processes === undefined ? ['processes'] : []),
        ...(memory !== undefined && bounded.memory === undefined ? ['memory'] : []),
      ];
      const perProcess = dataBytes === undefined ? '' : ` (${formatBytes(dataBytes)} per process)`;
      return [
        ...(bounds.length === 0 ? [] : [`${bounds.join(' and ')} (${mechanism})`]),
        ...(unbounded.length === 0 ? [] : [`${unbounded.join(' and ')} NOT bounded${perProcess}`]),
      ].join('; ');
    },
    explain(events) {
      if (events.memoryKills > 0 && bounded.memory !== undefined) {
        return `Killed by the sandbox: its commands used more than ${formatBytes(bounded.memory)} of memory together (maxMemoryBytes), so the kernel ended the largest process. Files written to /tmp and /dev/shm count too: they are held in memory. Use less at once (smaller inputs, fewer parallel jobs), and write large files in the workspace.`;
      }
      if (events.refusedForks > 0 && bounded.processes !== undefined) {
        return processLimitNote(bounded.processes);
      }
      return undefined;
    },
  };
}

/** What a refused fork is told, by the output or the cgroup's counter. */
export function processLimitNote(maxProcesses: number): string {
  return `Blocked by the sandbox: commands may run at most ${maxProcesses} processes and threads at once (all of them together).`;
}
