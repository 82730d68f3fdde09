import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { canHandOverPids } from '@agent/tooling-system-tools';
import { afterEach, describe, expect, it } from 'vitest';
import { execHelperSource } from './exec-helper-source.js';

// The exec helper ends a command's group only while no newer process holds the command's pid —
// but it counted only a running one: a newer group leader that had exited, not yet reaped by its
// parent, still names its group, and the helper's `end` signalled that group's other members
// (another command's). The helper runs here as in a sandbox, as the first process of a pid
// namespace of its own (`unshare`, root), where a command hands the pid over on purpose by
// writing the namespace's /proc/sys/kernel/ns_last_pid — nothing else forks there.

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

type HelperEvent = { type: string; id?: string; pid?: number; over?: boolean };

/** The helper in a new pid namespace, and the next event of a type and id it sends. */
function startHelper(dir: string): {
  send(request: object): void;
  next(type: string, id?: string): Promise<HelperEvent>;
} {
  const helperFile = path.join(dir, 'helper.cjs');
  fs.writeFileSync(helperFile, execHelperSource);
  const helper: ChildProcessWithoutNullStreams = spawn(
    'unshare',
    [
      '--pid',
      '--fork',
      '--kill-child',
      '--mount-proc',
      process.execPath,
      helperFile,
      // The starter's pid namespace: the helper's own differs, so it may sweep what it sees.
      fs.readlinkSync('/proc/self/ns/pid'),
    ],
    { stdio: 'pipe' },
  );
  // Its stdin closed, the helper kills what it started; unshare's end kills it (--kill-child),
  // and the namespace ends with it.
  cleanups.push(() => {
    helper.stdin.end();
    helper.kill('SIGKILL');
  });
  const events: HelperEvent[] = [];
  const waiting: { match: (event: HelperEvent) => boolean; resolve: (e: HelperEvent) => void }[] =
    [];
  createInterface({ input: helper.stdout }).on('line', (line) => {
    const event = JSON.parse(line) as HelperEvent;
    const waiter = waiting.find((candidate) => candidate.match(event));
    if (waiter === undefined) events.push(event);
    else {
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.resolve(event);
    }
  });
  return {
    send: (request) => helper.stdin.write(`${JSON.stringify(request)}\n`),
    next: (type, id) =>
      new Promise((resolve) => {
        const match = (event: HelperEvent) => event.type === type && event.id === id;
        const seen = events.find(match);
        if (seen === undefined) waiting.push({ match, resolve });
        else {
          events.splice(events.indexOf(seen), 1);
          resolve(seen);
        }
      }),
  };
}

/** Live (not zombie) processes whose command line holds `needle`. */
function processesWith(needle: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes(needle) && state !== 'Z')
        found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** Resolves with the text of `file` once it is there. */
async function written(file: string): Promise<string> {
  const until = Date.now() + 20_000;
  while (!fs.existsSync(file) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return fs.readFileSync(file, 'utf8');
}

// A command that hands `$ARGV[0]` to a new group leader (P), which starts `sleep $ARGV[2]` (C) in
// its group and exits; the command never reaps P (it execs `sleep`), so P stays a zombie naming
// the group C runs in. Writes P's pid to `$ARGV[1]` once P has exited.
const handOver = `
use POSIX ();
my ($wanted, $ready, $sleep) = @ARGV;
open my $last, '>', '/proc/sys/kernel/ns_last_pid' or die "ns_last_pid: $!";
print $last $wanted - 1;
close $last;
my $leader = fork;
if ($leader == 0) {
  POSIX::setsid();
  exec 'sleep', $sleep if fork == 0;
  POSIX::_exit(0);
}
sub state { open my $stat, '<', "/proc/$leader/stat" or return ''; (split ' ', (<$stat> =~ s/.*\\) //r))[0] }
select undef, undef, undef, 0.01 until state() eq 'Z';
open my $out, '>', "$ready.part" or die; print $out $leader; close $out;
rename "$ready.part", $ready;
exec 'sleep', '60';
`;

describe('the exec helper ending a command whose pid a newer group leader holds', () => {
  it.skipIf(!canHandOverPids)(
    'a zombie leader there still stops the signal to its group (root: unshare, ns_last_pid)',
    async () => {
      const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'helper-pid-reuse-')));
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      // The helper writes to FIFOs the owner reads: held open here (read and write), never read.
      const fifo = (name: string) => {
        const file = path.join(dir, name);
        expect(spawnSync('mkfifo', [file]).status).toBe(0);
        const fd = fs.openSync(file, fs.constants.O_RDWR);
        cleanups.push(() => fs.closeSync(fd));
        return file;
      };
      const [stdout, stderr] = [fifo('out'), fifo('err')];
      const helper = startHelper(dir);
      await helper.next('ready');
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
      // Command a exits at once, leaving a marked process outside its group: it is not over, and
      // its pid is free.
      const escapee = `60.${randomInt(1e8, 1e9)}`;
      helper.send({
        type: 'run',
        id: 'a',
        file: 'sh',
        args: ['-c', `MARK=a setsid sleep ${escapee} & exit 0`],
        cwd: dir,
        env,
        stdout,
        stderr,
        needle: 'MARK=a',
      });
      const started = await helper.next('started', 'a');
      const exited = await helper.next('exit', 'a');
      expect(exited.over).toBeUndefined();
      const pid = started.pid;
      if (pid === undefined) throw new Error('no pid for command a');
      // Command b gives a's pid to a new group leader, which exits as a zombie.
      const ready = path.join(dir, 'ready');
      const other = `60.${randomInt(1e8, 1e9)}`;
      helper.send({
        type: 'run',
        id: 'b',
        file: 'perl',
        args: ['-e', handOver, String(pid), ready, other],
        cwd: dir,
        env,
        stdout,
        stderr,
      });
      expect(Number(await written(ready))).toBe(pid);
      expect(processesWith(other)).toHaveLength(1);
      helper.send({ type: 'end', id: 'a', graceMs: 200 });
      await helper.next('ended', 'a');
      // a's own escapee is gone; the newer group's member is not (the old code SIGTERMed it).
      expect(processesWith(escapee)).toEqual([]);
      expect(processesWith(other)).toHaveLength(1);
    },
    60_000,
  );
});
