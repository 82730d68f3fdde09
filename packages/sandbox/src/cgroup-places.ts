import * as fs from 'node:fs';
import * as path from 'node:path';
import { isInside } from './real-paths.js';

/** A resource a sandbox's cgroup bounds. */
export type CgroupController = 'pids' | 'memory';

/**
 * A cgroup directory this process may make children in, and the controllers those children
 * get there. cgroup v1 has a hierarchy per controller (two places); v2 one for both.
 */
export interface CgroupPlace {
  version: 1 | 2;
  directory: string;
  controllers: readonly CgroupController[];
}

/** Where the sandbox's cgroups can go, and why the controllers missing from them cannot. */
export interface CgroupPlaces {
  places: CgroupPlace[];
  /** Each controller that no place offers, with the reason. */
  missing: Partial<Record<CgroupController, string>>;
}

/** What the kernel says about this process's cgroups (files read once; injectable for tests). */
export interface CgroupFacts {
  /** `/proc/self/cgroup`. */
  membership: string;
  /** `/proc/self/mountinfo`. */
  mountinfo: string;
  /** This process's pid. */
  pid: number;
}

const wanted: readonly CgroupController[] = ['pids', 'memory'];

/** The prefix of every cgroup directory a sandbox makes: `agent-sandbox-<owner pid>-…`. */
export const cgroupPrefix = 'agent-sandbox-';

/**
 * This process's pid namespace (its inode), in every name: a cgroup hierarchy can be shared by
 * processes of several pid namespaces (containers), where the same pid names different
 * processes — a sweep only judges names of its own namespace.
 */
export const pidNamespace = (() => {
  try {
    return /\[(\d+)\]/.exec(fs.readlinkSync('/proc/self/ns/pid'))?.[1] ?? '0';
  } catch {
    return '0';
  }
})();

/** `agent-sandbox-<pid>-<what>-<pid namespace>`. */
export function cgroupName(pid: number, what: string): string {
  return `${cgroupPrefix}${pid}-${what}-${pidNamespace}`;
}

/** Reads {@link CgroupFacts} of this process; undefined off Linux or where /proc cannot be read. */
export function currentCgroupFacts(): CgroupFacts | undefined {
  try {
    return {
      membership: fs.readFileSync('/proc/self/cgroup', 'utf8'),
      mountinfo: fs.readFileSync('/proc/self/mountinfo', 'utf8'),
      pid: process.pid,
    };
  } catch {
    return undefined;
  }
}

interface Mount {
  root: string;
  point: string;
  type: string;
  superOptions: string[];
}

/** `/proc/self/mountinfo` lines of cgroup file systems (`cgroup`, `cgroup2`). */
function cgroupMounts(mountinfo: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [before, after] = line.split(' - ');
    if (before === undefined || after === undefined) continue;
    const fields = before.split(' ');
    const [type, , superOptions] = after.split(' ');
    const root = fields[3];
    const point = fields[4];
    if (root === undefined || point === undefined || type === undefined) continue;
    if (type !== 'cgroup' && type !== 'cgroup2') continue;
    mounts.push({
      root: unescapeMountPath(root),
      point: unescapeMountPath(point),
      type,
      superOptions: (superOptions ?? '').split(','),
    });
  }
  return mounts;
}

/** mountinfo writes space, tab, newline and backslash in paths as octal escapes. */
function unescapeMountPath(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) =>
    String.fromCharCode(Number.parseInt(octal, 8)),
  );
}

/** Where the cgroup at `cgroupPath` (as /proc/self/cgroup names it) shows under `mount`. */
function directoryIn(mount: Mount, cgroupPath: string): string | undefined {
  // A cgroup named `..job` lies inside: compared by segments, not by a leading `..`.
  if (!isInside(mount.root, cgroupPath)) return undefined;
  return path.join(mount.point, path.posix.relative(mount.root, cgroupPath));
}

/**
 * The cgroup directories this process's own cgroups are, per controller we want: the v2
 * hierarchy's where it offers the controller (`cgroup.controllers`), else the v1 hierarchy's
 * that holds it. Nothing is created or changed here.
 */
export function ownCgroups(facts: CgroupFacts): {
  unified?: string;
  v1: Partial<Record<CgroupController, string>>;
} {
  const mounts = cgroupMounts(facts.mountinfo);
  const v1: Partial<Record<CgroupController, string>> = {};
  let unified: string | undefined;
  for (const line of facts.membership.split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (match === null) continue;
    const [, id, controllers = '', cgroupPath = '/'] = match;
    if (id === '0' && controllers === '') {
      const mount = mounts.find((entry) => entry.type === 'cgroup2');
      if (mount !== undefined) unified = directoryIn(mount, cgroupPath);
      continue;
    }
    for (const controller of controllers.split(',')) {
      if (!wanted.includes(controller as CgroupController)) continue;
      const mount = mounts.find(
        (entry) => entry.type === 'cgroup' && entry.superOptions.includes(controller),
      );
      const directory = mount === undefined ? undefined : directoryIn(mount, cgroupPath);
      if (directory !== undefined) v1[controller as CgroupController] = directory;
    }
  }
  return { ...(unified === undefined ? {} : { unified }), v1 };
}

function readList(file: string): string[] {
  try {
    return fs.readFileSync(file, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    return [];
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Where this process may make cgroups that bound `controllers`, made ready (v2: the
 * controllers enabled for children). cgroup v2's rule that a cgroup with processes cannot hand
 * controllers to children is met three ways: our cgroup is the root (exempt); or we are the
 * only process in it — then this process moves into a leaf child of its own and the controllers
 * are enabled (a `systemd-run --user --scope -p Delegate=yes` start); otherwise v2 cannot be
 * used. cgroup v1 needs only a writable directory (root). Each place is tried with a probe
 * child, made and removed.
 */
export function prepareCgroupPlaces(
  facts: CgroupFacts,
  controllers: readonly CgroupController[],
): CgroupPlaces {
  const own = ownCgroups(facts);
  const places: CgroupPlace[] = [];
  const missing: Partial<Record<CgroupController, string>> = {};
  let remaining = [...controllers];
  if (own.unified !== undefined && remaining.length > 0) {
    const offered = readList(path.join(own.unified, 'cgroup.controllers'));
    const usable = remaining.filter((controller) => offered.includes(controller));
    if (usable.length > 0) {
      const ready = readyUnified(own.unified, usable, facts.pid);
      if (typeof ready === 'string') {
        for (const controller of usable) missing[controller] = ready;
      } else {
        places.push(ready);
        remaining = remaining.filter((controller) => !usable.includes(controller));
      }
    }
  }
  for (const controller of remaining) {
    const directory = own.v1[controller];
    if (directory === undefined) {
      missing[controller] ??= `no cgroup hierarchy here offers the ${controller} controller`;
      continue;
    }
    const problem = probe(directory, [controller], 1, facts.pid);
    if (problem === undefined) {
      places.push({ version: 1, directory, controllers: [controller] });
      delete missing[controller];
    } else missing[controller] = problem;
  }
  return { places, missing };
}

/** A v2 place ready for children with `controllers`, or why there is none. */
function readyUnified(
  own: string,
  controllers: readonly CgroupController[],
  pid: number,
): CgroupPlace | string {
  const enabled = () => readList(path.join(own, 'cgroup.subtree_control'));
  const enable = () => {
    const absent = controllers.filter((controller) => !enabled().includes(controller));
    if (absent.length > 0) {
      fs.writeFileSync(
        path.join(own, 'cgroup.subtree_control'),
        absent.map((controller) => `+${controller}`).join(' '),
        { flag: 'r+' },
      );
    }
  };
  const isRoot =
    fs.existsSync(path.join(own, 'cgroup.controllers')) &&
    !fs.existsSync(path.join(own, 'cgroup.events'));
  if (!isRoot) {
    const members = readList(path.join(own, 'cgroup.procs'));
    const others = members.filter((member) => member !== String(pid));
    if (others.length > 0) {
      return `cgroup v2: ${own} holds other processes too (${others.slice(0, 3).join(', ')}${others.length > 3 ? ', …' : ''}), so the kernel lets no child of it have the ${controllers.join(' and ')} controllers; start the agent in a cgroup of its own (systemd-run --user --scope -p Delegate=yes …)`;
    }
    // We are alone: move into a leaf of our own, then our cgroup may hand controllers down.
    const leaf = path.join(own, cgroupName(pid, 'self'));
    try {
      fs.mkdirSync(leaf, { recursive: true });
      fs.writeFileSync(path.join(leaf, 'cgroup.procs'), String(pid), { flag: 'r+' });
    } catch (error) {
      try {
        fs.rmdirSync(leaf);
      } catch {
        // Not made, or not empty: left as it was.
      }
      return `cgroup v2: cannot make a cgroup in ${own} (${errorText(error)}); it is not delegated to this user`;
    }
  }
  try {
    enable();
  } catch (error) {
    return `cgroup v2: cannot enable ${controllers.join(' and ')} for children of ${own} (${errorText(error)})`;
  }
  const problem = probe(own, controllers, 2, pid);
  return problem ?? { version: 2, directory: own, controllers };
}

let probes = 0;

/** Makes and removes a child of `directory`; undefined when its limit files are there and writable. */
function probe(
  directory: string,
  controllers: readonly CgroupController[],
  version: 1 | 2,
  pid: number,
): string | undefined {
  const child = path.join(directory, cgroupName(pid, `probe${probes++}`));
  try {
    fs.mkdirSync(child);
  } catch (error) {
    return `cannot make a cgroup in ${directory} (${errorText(error)})`;
  }
  try {
    for (const controller of controllers) {
      const file = limitFile(controller, version);
      fs.accessSync(path.join(child, file), fs.constants.W_OK);
    }
    fs.accessSync(path.join(child, 'cgroup.procs'), fs.constants.W_OK);
    return undefined;
  } catch (error) {
    return `a cgroup made in ${directory} cannot be limited (${errorText(error)})`;
  } finally {
    try {
      fs.rmdirSync(child);
    } catch {
      // Swept later as an abandoned one.
    }
  }
}

/** The file that sets a controller's limit. */
export function limitFile(controller: CgroupController, version: 1 | 2): string {
  if (controller === 'pids') return 'pids.max';
  return version === 2 ? 'memory.max' : 'memory.limit_in_bytes';
}
