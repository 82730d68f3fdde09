// How a stdio server is started in a process group of its own on Linux: through perl, which
// sets the group and lets go of the terminal, then execs the server — or, outside a sandbox,
// stays as its subreaper and ends the daemons it leaves (see reaperScript).
import { accessSync, constants, readdirSync, readFileSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/**
 * The rest of the launcher where it reaps (an unsandboxed server on x86-64 or arm64): a server's
 * daemon that left its group and cleared its environment (`env -i setsid …`) outlived the server
 * and the agent (measured). The launcher makes itself the server's subreaper
 * (PR_SET_CHILD_SUBREAPER: the server's orphans come to it, not to init) and asks for SIGTERM
 * when the agent dies (PR_SET_PDEATHSIG), starts the server as its child in its group, and when
 * the server exits SIGKILLs every descendant left, in the group or not (on SIGTERM those outside
 * the group; all of them, and the group, when the agent is gone); it then exits as the server did.
 */
const reaperScript = String.raw`
use POSIX ();
syscall($prctl, 36, 1, 0, 0, 0);
syscall($prctl, 1, 15, 0, 0, 0);
my $owner = getppid();
my $group = getpgrp();
my $child = fork();
die "fork: $!\n" unless defined $child;
if ($child == 0) { no warnings 'exec'; exec { $ARGV[0] } @ARGV; print STDERR "exec $ARGV[0]: $!\n"; POSIX::_exit(127) }
open(STDIN, '<', '/dev/null');
open(STDOUT, '>', '/dev/null');
sub descendants {
  my ($all) = @_;
  my (%parent, %pgrp);
  opendir(my $proc, '/proc') or return ();
  for my $pid (grep { /^[0-9]+$/ } readdir $proc) {
    open(my $file, '<', "/proc/$pid/stat") or next;
    my $stat = <$file>;
    close $file;
    next unless defined $stat;
    my @fields = split / /, substr($stat, rindex($stat, ')') + 2);
    next if $fields[0] eq 'Z' || $fields[0] eq 'X';
    $parent{$pid} = $fields[1];
    $pgrp{$pid} = $fields[2];
  }
  my @found;
  for my $pid (keys %parent) {
    next if $pid == $$ || (!$all && $pgrp{$pid} == $group);
    my ($up, $steps) = ($parent{$pid}, 0);
    $up = $parent{$up} // 0 while $up > 1 && $up != $$ && $steps++ < 4096;
    push @found, [$pid, $parent{$pid}] if $up == $$;
  }
  return @found;
}
sub end_descendants {
  my ($all) = @_;
  for my $round (1 .. 500) {
    my @left = descendants($all);
    last unless @left;
    kill 'KILL', map { $_->[0] } @left;
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
# The server is over: whatever it left ends now, members of its group too (one on its way out of
# the group would slip past this sweep and the group kill after it).
end_descendants(1);
$SIG{TERM} = 'DEFAULT';
if ($status & 127) { kill $status & 127, $$; exit 128 + ($status & 127) }
exit $status >> 8;
`;

/**
 * `setpgid(0, 0)`, drop the controlling terminal (TIOCNOTTY: a server that opens /dev/tty fails
 * at once, as in a new session, instead of being stopped by SIGTTIN), then exec the command with
 * the same pid (sandboxed, or where it cannot reap) or start it as its child ({@link reaperScript}). This is what `detached` (setsid) gives without a new session: on Linux a session
 * is a scheduling autogroup, and a server in an autogroup of its own waits longer for a CPU on a
 * loaded machine. Node cannot call setpgid; perl can, and is on most Linux systems.
 */
const launcherScript =
  'setpgrp(0,0)or die"setpgid: $!\\n";' +
  'if(open(my $t,"+<","/dev/tty")){ioctl($t,0x5422,0);close $t}' +
  'my $prctl=shift @ARGV;' +
  'if(!$prctl){exec{$ARGV[0]}@ARGV;die"exec $ARGV[0]: $!\\n"}' +
  reaperScript;

/** prctl's system call number where the launcher reaps (x86-64, arm64); 0: it only execs. */
function prctlNumber(): number {
  if (process.arch === 'x64') return 157;
  if (process.arch === 'arm64') return 167;
  return 0;
}

/** Architectures whose TIOCNOTTY is 0x5422 (asm-generic and a few that share it). */
const genericIoctlArchs = new Set([
  'x64',
  'arm64',
  'arm',
  'ia32',
  'riscv64',
  's390x',
  'loong64',
  'ppc64',
]);
let perlPath: string | null | undefined;
/** Where perl is looked for: system folders only (as the bash tool's orphan reaper does). */
const systemPerlCandidates = ['/usr/bin/perl', '/bin/perl', '/usr/local/bin/perl'];

/** Whether `file` names an executable file (resolved like execvp: PATH, or relative to `cwd`). */
function findExecutable(file: string, path: string | undefined, cwd: string): string | undefined {
  const candidates = file.includes('/')
    ? [isAbsolute(file) ? file : resolve(cwd, file)]
    : (path ?? '').split(delimiter).map((dir) => join(dir === '' ? cwd : resolve(cwd, dir), file));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not there, or not executable: the next one.
    }
  }
  return undefined;
}

/**
 * The perl command that starts `file` in a process group of its own in this session, or
 * undefined where that is not possible here (then the server gets a session of its own). A
 * command that cannot be found is left to spawn, so its error stays spawn's own (ENOENT).
 */
export function groupLauncher(
  file: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  reap: boolean,
): { file: string; args: string[]; reaps: boolean } | undefined {
  if (process.platform !== 'linux' || !genericIoctlArchs.has(process.arch)) return undefined;
  // PERL5OPT would make perl load modules (or run the debugger) before the script.
  if (env.PERL5OPT !== undefined || env.PERL5DB !== undefined) return undefined;
  // The system's perl, never PATH's: it runs outside any sandbox, and PATH may name a folder of
  // the workspace (an activated `.venv/bin`, `npx`'s `node_modules/.bin`) where a sandboxed
  // command could have written a `perl` of its own.
  if (perlPath === undefined)
    perlPath = systemPerlCandidates.find((candidate) => findExecutable(candidate, '', '/')) ?? null;
  if (perlPath === null || findExecutable(file, env.PATH, cwd) === undefined) return undefined;
  const prctl = reap ? prctlNumber() : 0;
  return {
    file: perlPath,
    args: ['-e', launcherScript, '--', String(prctl), file, ...args],
    reaps: prctl !== 0,
  };
}

/** SIGKILLs every process of group `pgid` but its leader; false without `/proc`. */
export function killGroupButLeader(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return false;
  }
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry) || Number(entry) === pgid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 3);
      if (Number(fields[2]) === pgid) process.kill(Number(entry), 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  return true;
}
