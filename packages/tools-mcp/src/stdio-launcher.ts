// How a stdio server is started in a process group of its own on Linux: through perl, which
// sets the group and lets go of the terminal, then execs the server — or, outside a sandbox,
// stays as its subreaper and ends the daemons it leaves (@agent/sandbox's subreaper: a server's
// daemon that left its group and cleared its environment, `env -i setsid …`, outlived the server
// and the agent).
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { prctlSyscallNumber, subreaperSource, systemPerl } from '@agent/sandbox';

/**
 * `setpgid(0, 0)`, drop the controlling terminal (TIOCNOTTY: a server that opens /dev/tty fails
 * at once, as in a new session, instead of being stopped by SIGTTIN), then exec the command with
 * the same pid (sandboxed, or where it cannot reap: a first argument 0) or stay as the subreaper
 * that starts it as its child ({@link subreaperSource}). This is what `detached` (setsid) gives
 * without a new session: on Linux a session is a scheduling autogroup, and a server in an
 * autogroup of its own waits longer for a CPU on a loaded machine. Node cannot call setpgid;
 * perl can, and is on most Linux systems.
 */
const launcherScript =
  'setpgrp(0,0)or die"setpgid: $!\\n";' +
  'if(open(my $t,"+<","/dev/tty")){ioctl($t,0x5422,0);close $t}' +
  'if(!$ARGV[0]){shift @ARGV;exec{$ARGV[0]}@ARGV;die"exec $ARGV[0]: $!\\n"}' +
  subreaperSource;

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
  // The system's perl, never PATH's (see systemPerl).
  const perlPath = systemPerl();
  if (perlPath === undefined || findExecutable(file, env.PATH, cwd) === undefined) return undefined;
  const prctl = reap ? (prctlSyscallNumber() ?? 0) : 0;
  return {
    file: perlPath,
    args: ['-e', launcherScript, '--', String(prctl), file, ...args],
    reaps: prctl !== 0,
  };
}
