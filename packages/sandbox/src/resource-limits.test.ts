import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cgroupPrefix, currentCgroupFacts, ownCgroups } from './cgroup-places.js';
import type { Attempt } from './escape-attempts.js';
import type { RunnerUser, RunReport } from './escape-harness.js';
import { runInEachMode, runnerSuite, sandboxModes } from './runner-suite.js';
import { createSandbox } from './sandbox.js';

// A fork bomb run as root took every process id of the machine (root is exempt from
// RLIMIT_NPROC), and a command writing to its in-memory /tmp or /dev/shm could fill the host's
// RAM. Each command (each long-lived sandbox) now runs in a cgroup of its own with pids.max and
// a memory limit. Tried through the built package as root (cgroup v1 on this machine) and as
// nobody (no cgroup can be made: RLIMIT_NPROC only, memory unbounded — said in the status). The
// runner runs a bomb or a hog only when the sandbox reports it bounded (`requires`): never
// unbounded on a shared machine.

const suite = runnerSuite('the resource limits', 'limits');
const { available, isRoot, parent } = suite;
/**
 * As root where cgroups can be made: a pids and a memory cgroup given to nobody (owned by it, as
 * systemd's delegation does), with nobody's runner started inside — the unprivileged user whose
 * cgroup lets it make children. Undefined elsewhere.
 */
const delegated = (() => {
  if (!isRoot) return undefined;
  const facts = currentCgroupFacts();
  if (facts === undefined) return undefined;
  const own = ownCgroups(facts);
  const parents = [own.v1.pids, own.v1.memory].filter((entry) => entry !== undefined);
  if (parents.length !== 2) return undefined;
  const directories: string[] = [];
  try {
    for (const parentDirectory of parents) {
      const directory = path.join(parentDirectory, `limits-test-delegated-${process.pid}`);
      fs.mkdirSync(directory);
      directories.push(directory);
      for (const entry of ['', 'cgroup.procs', 'tasks']) {
        fs.chownSync(path.join(directory, entry), 65534, 65534);
      }
    }
  } catch {
    for (const directory of directories) fs.rmdirSync(directory);
    return undefined;
  }
  return directories;
})();
afterAll(() => {
  // Empty once the runner is gone; its own children it removed itself (checked below).
  for (const directory of delegated ?? []) fs.rmdirSync(directory);
});

const users: RunnerUser[] = [
  ...suite.users,
  ...(delegated === undefined
    ? []
    : [
        {
          label: 'nobody in a delegated cgroup',
          uid: 65534,
          gid: 65534,
          cgroups: delegated.map((directory) => path.join(directory, 'cgroup.procs')),
        },
      ]),
];

const maxProcesses = 64;
const maxMemoryBytes = 64 * 1024 * 1024;

/** Whether this machine lets root make cgroups with both controllers (the runner's own answer decides per user). */
const attempts: Attempt[] = [
  {
    name: 'fork bomb',
    requires: 'maxProcesses',
    // Ends by itself: the bomb's processes die with the command's sandbox.
    // Counted with builtins only (no fork is left to run ls): the processes in its pid namespace.
    // bash exits when a fork it needs fails: after the bomb, builtins only (read waits on a FIFO).
    // It waits until the bomb nears the limit (at most 15 s), not a fixed 2 s: under a CI's load
    // 2 s saw 46 processes and no refused fork yet (official CI, stop 46).
    script: `mkfifo /tmp/wait; exec 9<>/tmp/wait; b() { b | b & }; b; shopt -s nullglob; for ((i = 0; i < 150; i++)); do p=(/proc/[0-9]*); (( \${#p[@]} >= ${maxProcesses - 8} )) && break; read -t 0.1 -u 9; done; read -t 1 -u 9; p=(/proc/[0-9]*); echo "running \${#p[@]}"`,
  },
  {
    name: 'fork 100 children, counting',
    requires: 'maxProcesses',
    script: `perl -e 'my ($n, @k) = (0); for (1..100) { my $p = fork; if (!defined $p) { print "refused: $!\\n"; last } if ($p == 0) { sleep 30; exit 0 } push @k, $p; $n++ } print "started $n\\n"; kill 9, @k'`,
  },
  {
    name: 'fill /tmp',
    requires: 'maxMemoryBytes',
    script: 'head -c 2G /dev/zero > /tmp/x; echo "exit $?"',
  },
  { name: 'after /tmp', script: 'echo alive; ls /tmp' },
  {
    name: 'fill /dev/shm',
    requires: 'maxMemoryBytes',
    script: 'head -c 2G /dev/zero > /dev/shm/x; echo "exit $?"',
  },
  { name: 'after /dev/shm', script: 'echo alive; ls /dev/shm' },
  {
    // Every in-memory file system a command may write, 256 MiB each: without a memory cgroup
    // (an ordinary user on cgroup v1, v2 without delegation) nothing but their size bounds them.
    name: 'fill every tmpfs',
    script:
      'for d in /tmp /dev/shm /run "$HOME/.ssh"; do head -c 256M /dev/zero > "$d/fill" 2>/dev/null; echo "$d exit $? bytes $(stat -c %s "$d/fill" 2>/dev/null)"; rm -f "$d/fill"; done',
  },
  {
    name: 'allocate 1 GiB',
    requires: 'maxMemoryBytes',
    script: `perl -e '$x = "a" x (1 << 30); print "allocated\\n"'`,
  },
  {
    name: 'allocate 8 MiB (within the limit)',
    requires: 'maxMemoryBytes',
    script: `perl -e '$x = "a" x (8 << 20); print "allocated\\n"'`,
  },
  {
    name: 'leave or lift the cgroup',
    // Every write to the cgroup file system is refused: it is mounted read-only inside.
    script: `for f in /sys/fs/cgroup/*/cgroup.procs /sys/fs/cgroup/*/tasks /sys/fs/cgroup/*/${cgroupPrefix}*/pids.max /sys/fs/cgroup/memory/*/*/${cgroupPrefix}*/memory.limit_in_bytes /sys/fs/cgroup/memory/*/*/${cgroupPrefix}*/memory.memsw.limit_in_bytes /sys/fs/cgroup/memory/*/*/cgroup.procs /sys/fs/cgroup/*/${cgroupPrefix}*/cgroup.procs; do [ -e "$f" ] || continue; (echo $$ > "$f") 2>/dev/null && echo "ESCAPED $f"; (echo max > "$f") 2>/dev/null && echo "ESCAPED $f"; done
mkdir /sys/fs/cgroup/pids/escape 2>/dev/null && echo ESCAPED mkdir
mkdir -p /tmp/cg; mount -t cgroup -o pids none /tmp/cg 2>/dev/null && echo ESCAPED mount
mount -t cgroup2 none /tmp/cg 2>/dev/null && echo ESCAPED mount2
echo tried`,
  },
];

const index = (name: string) => attempts.findIndex((attempt) => attempt.name === name);

/** This process's cgroup directories (the runner, its child, has the same). */
const ownDirectories = (() => {
  const facts = currentCgroupFacts();
  if (facts === undefined) return [];
  const own = ownCgroups(facts);
  return [
    ...new Set([...(own.unified === undefined ? [] : [own.unified]), ...Object.values(own.v1)]),
  ];
})();

/**
 * Whether this process can make a cgroup with the pids controller next to its own (root on this
 * machine; not in a container whose /sys/fs/cgroup is read-only): found here independently of
 * the package, so a sandbox that fails to use one is caught.
 */
const cgroupsWritable = (() => {
  const facts = currentCgroupFacts();
  if (facts === undefined) return false;
  const own = ownCgroups(facts);
  const candidates = [own.v1.pids, own.unified].filter((entry) => entry !== undefined);
  return candidates.some((directory) => {
    const probe = path.join(directory, `limits-test-${process.pid}`);
    try {
      fs.mkdirSync(probe);
    } catch {
      return false;
    }
    const limited = fs.existsSync(path.join(probe, 'pids.max'));
    fs.rmdirSync(probe);
    return limited;
  });
})();

/** The cgroups a runner left behind. */
function leftBy(pid: number): string[] {
  return [...ownDirectories, ...(delegated ?? [])].flatMap((directory) => {
    try {
      return fs
        .readdirSync(directory)
        .filter((entry) => entry.startsWith(`${cgroupPrefix}${pid}-`))
        .map((entry) => path.join(directory, entry));
    } catch {
      return [];
    }
  });
}

describe.runIf(available).each(users)('the resource limits, as $label', (user) => {
  const { reports } = runInEachMode(
    suite,
    user,
    {
      options: (fixture) => ({ writableRoots: [fixture.workspace], maxProcesses, maxMemoryBytes }),
    },
    attempts,
  );

  const reportOf = (label: string): RunReport => {
    const report = reports.get(label);
    if (report === undefined) throw new Error(`no report for ${label}`);
    return report;
  };
  const result = (label: string, name: string) => {
    const found = reportOf(label).results[index(name)];
    if (found === undefined) throw new Error(`no result for ${name} in ${label}`);
    return found;
  };

  describe.each(sandboxModes)('$label', (mode) => {
    it('says what it bounds, and what it cannot', () => {
      const { status, description } = reportOf(mode.label);
      // As root on a machine with cgroups: both; as an ordinary user without delegation:
      // RLIMIT_NPROC, and memory NOT bounded — said in the status and the description.
      if (status.limits.maxMemoryBytes !== undefined) {
        expect(status.limits).toMatchObject({ maxProcesses, maxMemoryBytes });
        expect(status.limits.mechanism).toMatch(/^cgroup v[12]/);
        expect(description).toContain('at most 64 processes and 64 MiB of memory (cgroup v');
      } else {
        expect(description).toMatch(/memory NOT bounded/);
        expect(status.limitations.join('\n')).toMatch(/memory is NOT bounded: no memory cgroup/);
        if (user.uid === undefined && isRoot) {
          // Root with no cgroup at all: processes unbounded too, and said.
          expect(status.limitations.join('\n')).toMatch(/processes are NOT bounded/);
        } else {
          expect(status.limits).toMatchObject({ mechanism: 'rlimit', maxProcesses });
        }
      }
      if ((user.uid === undefined && cgroupsWritable) || user.cgroups !== undefined) {
        // Where this process can make a cgroup itself, the sandbox must have used one.
        expect(status.limits.maxProcesses).toBe(maxProcesses);
        expect(status.limits.mechanism).toMatch(/^cgroup v[12]/);
      }
    });

    it('contains a fork bomb: refused forks, explained, and nothing of it left', () => {
      const bomb = result(mode.label, 'fork bomb');
      if (bomb.skipped !== undefined) {
        expect(isRoot && user.uid === undefined).toBe(false);
        return;
      }
      expect(bomb.output).toMatch(/fork: (retry: )?Resource temporarily unavailable/);
      const running = Number(/running (\d+)/.exec(bomb.output)?.[1]);
      expect(running, bomb.output.slice(-500)).toBeLessThanOrEqual(maxProcesses);
      const counted = result(mode.label, 'fork 100 children, counting');
      expect(counted.output).toMatch(/refused: Resource temporarily unavailable/);
      expect(Number(/started (\d+)/.exec(counted.output)?.[1])).toBeLessThan(maxProcesses);
      if (reportOf(mode.label).status.limits.mechanism.startsWith('cgroup')) {
        expect(bomb.limitEvents?.refusedForks).toBeGreaterThan(0);
        expect(bomb.limitNote).toBe(
          `Blocked by the sandbox: commands may run at most ${maxProcesses} processes and threads at once (all of them together).`,
        );
      }
      // The machine is still usable: this process can start one.
      expect(spawnSync('true').status).toBe(0);
    });

    it.each(['/tmp', '/dev/shm'])(
      'stops a file filling %s, explains it, and frees it for the next command',
      (where) => {
        const fill = result(mode.label, `fill ${where}`);
        const after = result(mode.label, `after ${where}`);
        if (fill.skipped !== undefined) {
          expect(isRoot && user.uid === undefined).toBe(false);
          return;
        }
        // Killed (the writer, the sandbox, or the host's helper): never 2 GiB written.
        expect(fill.output).not.toMatch(/exit 0/);
        expect(fill.limitEvents?.memoryKills).toBeGreaterThan(0);
        expect(fill.limitNote).toMatch(
          /^Killed by the sandbox: its commands used more than 64 MiB of memory together \(maxMemoryBytes\).*Files written to \/tmp and \/dev\/shm count too/,
        );
        // The next command runs, in a sandbox whose /tmp and /dev/shm are empty again.
        expect(after.output).toMatch(/^alive\n/);
        expect(after.output).not.toMatch(/\bx\b/);
        expect(after.code).toBe(0);
      },
    );

    it('where no memory cgroup counts them, sizes /tmp, /dev/shm, /run and hidden directories within maxMemoryBytes', () => {
      const fill = result(mode.label, 'fill every tmpfs');
      if (reportOf(mode.label).status.limits.maxMemoryBytes !== undefined) {
        // A cgroup counts the files: the writer is killed at the limit (above), never 256 MiB written.
        expect(fill.output).not.toMatch(/bytes 268435456/);
        return;
      }
      const written = [...fill.output.matchAll(/^(\S+) exit (\d+) bytes (\d*)$/gm)];
      expect(written.map((line) => line[1])).toEqual([
        '/tmp',
        '/dev/shm',
        '/run',
        expect.stringMatching(/\.ssh$/),
      ]);
      for (const [line, , code, bytes] of written) {
        expect(code, line).not.toBe('0');
        expect(Number(bytes), line).toBeLessThanOrEqual(maxMemoryBytes / 2);
      }
      const total = written.reduce((sum, line) => sum + Number(line[3]), 0);
      expect(total).toBeLessThanOrEqual(maxMemoryBytes + 1024 * 1024);
    });

    it('kills a memory hog with the explanation, and lets one within the limit run', () => {
      const hog = result(mode.label, 'allocate 1 GiB');
      const small = result(mode.label, 'allocate 8 MiB (within the limit)');
      if (hog.skipped !== undefined) {
        expect(isRoot && user.uid === undefined).toBe(false);
        return;
      }
      expect(hog.output).not.toContain('allocated');
      expect(hog.limitNote).toMatch(/^Killed by the sandbox: .*64 MiB of memory/);
      expect(small.output).toBe('allocated\n');
      expect(small.limitNote).toBeUndefined();
    });

    it('cannot leave, lift or remount its cgroup', () => {
      const tried = result(mode.label, 'leave or lift the cgroup');
      expect(tried.output).toContain('tried');
      expect(tried.output).not.toContain('ESCAPED');
    });

    it('leaves no cgroup behind', () => {
      expect(leftBy(reportOf(mode.label).runnerPid)).toEqual([]);
    });
  });
});

describe('maxMemoryBytes and cgroups', () => {
  it('refuses what is not an integer of at least 16 MiB, or Infinity', () => {
    for (const bad of [0, 1024, 16 * 1024 * 1024 - 1, 1.5e9 + 0.5, -1, Number.NaN]) {
      expect(() =>
        createSandbox({ mode: 'off', writableRoots: ['/'], maxMemoryBytes: bad }),
      ).toThrow(/maxMemoryBytes: expected an integer of at least 16777216 \(16 MiB\) or Infinity/);
    }
    expect(() =>
      createSandbox({
        mode: 'off',
        writableRoots: ['/'],
        cgroups: 'sometimes' as unknown as 'auto',
      }),
    ).toThrow(/cgroups: expected auto or off/);
  });

  it.runIf(available)(
    'with cgroups off, bounds processes by RLIMIT_NPROC only and says memory is not bounded',
    () => {
      const sandbox = createSandbox({
        mode: 'required',
        writableRoots: [parent],
        cgroups: 'off',
        onWarning: () => undefined,
      });
      expect(sandbox.status.limits.maxMemoryBytes).toBeUndefined();
      expect(sandbox.status.limitations.join('\n')).toMatch(
        /memory is NOT bounded: .*cgroups: off/,
      );
      expect(sandbox.describe()).toMatch(/memory NOT bounded$/);
    },
  );

  it.runIf(available)(
    'with every limit lifted, makes no cgroup and says nothing of limits',
    async () => {
      const sandbox = createSandbox({
        mode: 'required',
        writableRoots: [parent],
        maxProcesses: Number.POSITIVE_INFINITY,
        maxMemoryBytes: Number.POSITIVE_INFINITY,
        maxFileBytes: Number.POSITIVE_INFINITY,
      });
      expect(sandbox.status.limits).toEqual({ mechanism: 'none' });
      expect(sandbox.status.limitations).toEqual([]);
      const wrapped = await sandbox.wrap({ file: 'true', args: [], cwd: parent, env: {} });
      expect(wrapped.finish).toBeUndefined();
    },
  );

  it.runIf(available)(
    'starts the command as one process in its cgroup, exit code kept; a killed one leaves neither process nor cgroup',
    async () => {
      const sandbox = createSandbox({
        mode: 'required',
        writableRoots: [parent],
        onWarning: () => undefined,
      });
      if (!sandbox.status.limits.mechanism.startsWith('cgroup')) {
        // An ordinary user without a delegated cgroup: nothing to look at (said in the status).
        expect(sandbox.status.limitations.join('\n')).toMatch(/memory is NOT bounded/);
        return;
      }
      const exit = await sandbox.wrap({ file: 'sh', args: ['-c', 'exit 7'], cwd: parent, env: {} });
      const code = spawnSync(exit.file, exit.args, { cwd: exit.cwd, env: exit.env }).status;
      expect(code).toBe(7);
      await exit.finish?.();
      // A daemon that left the command's session, and the command, killed from outside (abort).
      const wrapped = await sandbox.wrap({
        file: 'sh',
        args: ['-c', 'setsid sleep 600 & echo started; exec sleep 600'],
        cwd: parent,
        env: {},
      });
      const child = spawn(wrapped.file, [...wrapped.args], {
        cwd: wrapped.cwd,
        env: wrapped.env,
        detached: true,
      });
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      // The cgroup's shell exec'd bwrap: one process, as the caller's kill and exit code expect.
      // bubblewrap by its real path, found once (planted-programs.test.ts).
      expect(fs.readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0')[0]).toMatch(
        /^\/.*\/bwrap$/,
      );
      const mine = leftBy(process.pid);
      expect(mine.length).toBeGreaterThan(0);
      const members = mine.flatMap((directory) =>
        fs.readFileSync(path.join(directory, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean),
      );
      expect(members).toContain(String(child.pid));
      const closed = new Promise((resolve) => child.once('close', resolve));
      process.kill(-(child.pid as number), 'SIGKILL');
      await closed;
      await wrapped.finish?.();
      expect(leftBy(process.pid)).toEqual([]);
      // Gone, or a zombie its parent has not reaped yet (out of every cgroup), or the pid reused.
      for (const pid of new Set(members)) {
        const state = (() => {
          try {
            const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
            const command = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
            return /\) Z /.test(stat) || !/sleep|bwrap|sh/.test(command) ? 'gone' : command;
          } catch {
            return 'gone';
          }
        })();
        expect(state, `process ${pid}`).toBe('gone');
      }
      await sandbox.close();
    },
  );

  it.runIf(available)(
    'a cgroup whose owner was killed (no exit handler ran) is removed by the next sandbox made',
    async () => {
      const probe = createSandbox({
        mode: 'required',
        writableRoots: [parent],
        onWarning: () => undefined,
      });
      if (!probe.status.limits.mechanism.startsWith('cgroup')) return;
      const entry = new URL('../dist/index.js', import.meta.url).href;
      const script = `
        import { spawn } from 'node:child_process';
        import { createSandbox } from ${JSON.stringify(entry)};
        const sandbox = createSandbox({ mode: 'required', writableRoots: [process.cwd()] });
        const wrapped = await sandbox.wrap({ file: 'sleep', args: ['600'], cwd: process.cwd(), env: {} });
        spawn(wrapped.file, wrapped.args, { cwd: wrapped.cwd, env: wrapped.env, stdio: 'ignore' });
        console.log('running');
      `;
      const owner = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: parent });
      await new Promise<void>((resolve) => owner.stdout.once('data', () => resolve()));
      const ownerPid = owner.pid ?? 0;
      expect(leftBy(ownerPid).length).toBeGreaterThan(0);
      const gone = new Promise((resolve) => owner.once('close', resolve));
      owner.kill('SIGKILL');
      await gone;
      // Its cgroup stayed; its sandbox too when the owner died before bubblewrap had set up
      // --die-with-parent (killed while the sandbox started, as here at times).
      const orphans = leftBy(ownerPid).flatMap((directory) =>
        fs.readFileSync(path.join(directory, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean),
      );
      const startOf = (stat: string) => stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
      const readStat = (pid: string) => {
        try {
          return fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        } catch {
          return undefined;
        }
      };
      const started = new Map([...new Set(orphans)].map((pid) => [pid, readStat(pid)]));
      // Swept in the background when a sandbox is made; close() waits for that.
      const next = createSandbox({
        mode: 'required',
        writableRoots: [parent],
        onWarning: () => undefined,
      });
      await next.close();
      expect(leftBy(ownerPid)).toEqual([]);
      const stateOf = (pid: string) => {
        const stat = readStat(pid);
        const before = started.get(pid);
        // Gone, a zombie, or the pid reused by something else (another start time).
        if (stat === undefined || before === undefined || /\) Z /.test(stat)) return 'gone';
        return startOf(stat) === startOf(before) && /\((sleep|bwrap)\)/.test(stat)
          ? 'running'
          : 'gone';
      };
      for (const pid of started.keys()) {
        // A killed process leaves its cgroup (which can then be removed) before it is a zombie:
        // in between, under a loaded CI's scheduler, it still reads as running (run103).
        const deadline = Date.now() + 5_000;
        while (stateOf(pid) === 'running' && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 20));
        expect(stateOf(pid), `process ${pid}`).toBe('gone');
      }
    },
  );

  it.runIf(available)(
    'the memory a filled /tmp held is given back to the machine once the command ended',
    async () => {
      const sandbox = createSandbox({
        mode: 'required',
        writableRoots: [parent],
        maxMemoryBytes,
        onWarning: () => undefined,
      });
      if (sandbox.status.limits.maxMemoryBytes === undefined) return;
      // Shared memory (tmpfs) of the whole machine: eight fills of 64 MiB each that were not
      // given back would add 512 MiB; others' use of tmpfs meanwhile is far below the margin.
      const shared = () =>
        Number(/^Shmem:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/meminfo', 'utf8'))?.[1]) * 1024;
      const before = shared();
      for (let round = 0; round < 8; round++) {
        const wrapped = await sandbox.wrap({
          file: 'sh',
          args: ['-c', 'head -c 2G /dev/zero > /tmp/x'],
          cwd: parent,
          env: {},
        });
        spawnSync(wrapped.file, [...wrapped.args], { cwd: wrapped.cwd, env: wrapped.env });
        const events = await wrapped.finish?.();
        expect(events?.memoryKills).toBeGreaterThan(0);
      }
      expect(shared() - before).toBeLessThan(4 * maxMemoryBytes);
      await sandbox.close();
    },
  );
});
