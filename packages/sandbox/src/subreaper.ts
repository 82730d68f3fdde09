// Outside the sandbox, what a process leaves behind after leaving its process group and clearing
// its environment (`env -i setsid nohup daemon &`, a double fork, `setpgid`) was found by nothing:
// neither the group kill nor an environment marker reaches it, and it outlived the call (bash) or
// the server (MCP) and the agent. A subreaper catches it: the kernel gives a process's orphans to
// its nearest subreaper ancestor instead of init. Node cannot ask for that (`prctl` is a native
// call) but perl, present on nearly every Linux, can through `syscall`; so the bash tool and the
// MCP stdio launcher start such a process under this one small perl program, which is its parent,
// takes its orphans, and ends them when it ends.
import * as fs from 'node:fs';

/**
 * The subreaper, a perl program. Arguments: prctl's system call number (see
 * {@link prctlSyscallNumber}), then the command (file and arguments). It runs the command as its
 * child in its own process group (a group kill reaches both) and lets go of its standard input and
 * output (a reader of the command's output sees its end when the command's side closes, not when
 * the subreaper exits). When the command exits it ends every descendant left, in the group or
 * not; when SIGTERM arrives (the call is aborted or timed out) those that left the group (the
 * caller kills the group); when its parent dies without ending it (PR_SET_PDEATHSIG) all of them,
 * the group too. It exits as the command did (a signal re-raised). Code may run before it in the
 * same `perl -e` (the MCP launcher sets the process group first).
 */
export const subreaperSource = String.raw`
use strict; use warnings; use POSIX ();
my $prctl = shift @ARGV;
my $group = getpgrp();
my $owner = getppid();
$0 = 'agent-orphan-reaper';
syscall($prctl, 36, 1, 0, 0, 0);
syscall($prctl, 1, 15, 0, 0, 0);
my $child = fork();
if (!defined $child) { print STDERR "agent: cannot start the command: $!\n"; exit 126 }
if ($child == 0) {
  no warnings 'exec';
  exec { $ARGV[0] } @ARGV;
  print STDERR "agent: cannot run $ARGV[0]: $!\n";
  POSIX::_exit(127);
}
open(STDIN, '<', '/dev/null');
open(STDOUT, '>', '/dev/null');
sub stat_of {
  my ($pid) = @_;
  open(my $file, '<', "/proc/$pid/stat") or return ();
  my $stat = <$file>;
  close $file;
  return () unless defined $stat;
  # State, parent, process group, …, start time (fields 3, 4, 5 and 22 of proc(5)).
  return split / /, substr($stat, rindex($stat, ')') + 2);
}
sub descendants {
  my ($all) = @_;
  my (%parent, %pgrp, %start);
  opendir(my $proc, '/proc') or return ();
  for my $pid (grep { /^[0-9]+$/ } readdir $proc) {
    my @fields = stat_of($pid);
    next unless @fields;
    next if $fields[0] eq 'Z' || $fields[0] eq 'X';
    $parent{$pid} = $fields[1];
    $pgrp{$pid} = $fields[2];
    $start{$pid} = $fields[19];
  }
  my @found;
  for my $pid (keys %parent) {
    next if $pid == $$ || (!$all && $pgrp{$pid} == $group);
    my ($up, $steps) = ($parent{$pid}, 0);
    $up = $parent{$up} // 0 while $up > 1 && $up != $$ && $steps++ < 4096;
    push @found, [$pid, $parent{$pid}, $start{$pid}] if $up == $$;
  }
  return @found;
}
# Whether the process at a pid is still the one the scan found (its start time) and, read again
# now, one of ours: the scan does not see /proc at one instant, and a pid it found may belong to
# another process by the time it is signalled (one that exited, reaped by its parent, and the pid
# given to a new process — a pid_max of 32,768 wraps in minutes on a busy machine).
sub still_ours {
  my ($pid, $start) = @_;
  my @fields = stat_of($pid);
  return 0 unless @fields && defined $fields[19] && defined $start && $fields[19] eq $start;
  my ($up, $steps) = ($fields[1], 0);
  while ($up > 1 && $up != $$ && $steps++ < 4096) {
    my @above = stat_of($up);
    return 0 unless @above;
    $up = $above[1];
  }
  return $up == $$;
}
# SIGKILL through a pidfd (Linux 5.3+), opened before the check: it stays on that process, never
# on a later one given the same pid. Without pidfds, by number after the same check.
sub kill_found {
  my ($pid, $start) = @_;
  my $fd = syscall(434, $pid + 0, 0);
  if ($fd < 0) {
    kill 'KILL', $pid if $! != POSIX::ESRCH() && still_ours($pid, $start);
    return;
  }
  syscall(424, $fd + 0, 9, 0, 0) if still_ours($pid, $start);
  POSIX::close($fd);
}
sub end_descendants {
  my ($all) = @_;
  for my $round (1 .. 500) {
    my @left = descendants($all);
    last unless @left;
    kill_found($_->[0], $_->[2]) for @left;
    # Ours are reaped here (left to init they stay zombies where init does not reap); the rest
    # by their parents.
    waitpid($_->[0], 0) for grep { $_->[1] == $$ } @left;
    1 while waitpid(-1, POSIX::WNOHANG()) > 0;
  }
}
$SIG{TERM} = sub {
  my $orphaned = getppid() != $owner;
  end_descendants($orphaned);
  kill 'KILL', -$group if $orphaned;
};
my $status;
while (1) {
  my $done = waitpid(-1, 0);
  if ($done == $child) { $status = $?; last }
  if ($done == -1) { $status = 127 << 8; last }
}
# The command is over: whatever it left ends now, members of its group too (one on its way out of
# the group, a setpgid still to come, would slip past both this sweep and the caller's group kill).
end_descendants(1);
$SIG{TERM} = 'DEFAULT';
if ($status & 127) { kill $status & 127, $$; exit 128 + ($status & 127) }
exit $status >> 8;
`;

/** prctl's system call number where the subreaper knows it (Linux on x86-64 or arm64), else undefined. */
export function prctlSyscallNumber(): number | undefined {
  if (process.platform !== 'linux') return undefined;
  if (process.arch === 'x64') return 157;
  if (process.arch === 'arm64') return 167;
  return undefined;
}

/** Where perl is looked for: system folders only, never PATH (a workspace's own `perl` must not run first). */
const perlCandidates = ['/usr/bin/perl', '/bin/perl', '/usr/local/bin/perl'];

let perl: string | null | undefined;

/**
 * The system's perl, found once (the subreaper runs outside any sandbox, and PATH may name a
 * workspace folder — an activated `.venv/bin`, `npx`'s `node_modules/.bin` — where a sandboxed
 * command could have written a `perl` of its own); undefined where there is none.
 */
export function systemPerl(): string | undefined {
  if (perl === undefined) {
    perl =
      perlCandidates.find((file) => {
        try {
          fs.accessSync(file, fs.constants.X_OK);
          return fs.statSync(file).isFile();
        } catch {
          return false;
        }
      }) ?? null;
  }
  return perl ?? undefined;
}

/**
 * SIGKILLs every process of group `pgid` but its leader (the subreaper, which then ends what left
 * the group and exits); false without `/proc`. `kill` defaults to `process.kill`. Call it only
 * while the leader is not reaped: after, group `pgid` may be a newer process's (a pid is handed
 * out again once no process bears it as its group id), and its members would be killed.
 */
export function killGroupButLeader(
  pgid: number,
  kill: (pid: number, signal: NodeJS.Signals) => unknown = (pid, signal) =>
    process.kill(pid, signal),
): boolean {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return false;
  }
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry) || Number(entry) === pgid) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 3);
      if (Number(fields[2]) === pgid) kill(Number(entry), 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  return true;
}
