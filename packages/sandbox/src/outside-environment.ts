// The programs that start a sandbox — the shells that enter the cgroups, open the seccomp filter
// and pin directories, bwrap itself, and for the allow-listed network an outer bwrap, its shell
// and socat — run outside it. Started with the command's environment, the dynamic loader ran
// what LD_PRELOAD, LD_AUDIT or LD_LIBRARY_PATH named in each of them (and wrote where
// LD_DEBUG_OUTPUT said), glibc read GCONV_PATH, GLIBC_TUNABLES and MALLOC_*, and PATH chose
// programs: all with the whole file system in view. The environment is part of the command, so
// it must take effect inside alone. These stages get an environment of their own (a system PATH
// and the command's entries under names no program reads); the last one hands the entries to
// bwrap on a descriptor (`--args`), and bwrap sets them, and only them, for the command.

/** The PATH of every program that runs outside the sandbox: system folders only. */
export const systemPath = '/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The descriptor bwrap reads the command's environment from (`--setenv NAME VALUE`, each word
 * ended by a NUL): below the seccomp filter's (9) and the pinned directories' (10 and on).
 * bwrap closes it once read.
 */
export const environmentDescriptor = 8;

/** What the bwrap that starts the command gets first: an empty environment, then the command's. */
export const environmentArguments: readonly string[] = [
  '--clearenv',
  '--args',
  String(environmentDescriptor),
];

/** The name each carried entry has in the outside stages' environment, by index. */
const entryPrefix = 'AGENT_SANDBOX_ENV_';

/** The outside stages' environment, and how many of the command's entries it carries. */
export interface CarriedEnvironment {
  /** {@link systemPath}, and `AGENT_SANDBOX_ENV_<n>=NAME=value` per entry of the command's. */
  env: Record<string, string>;
  count: number;
}

/**
 * The environment the outside stages start with: the command's entries travel as values (no
 * loader, libc, shell, perl or socat reads `AGENT_SANDBOX_ENV_*`), never in argv, which every
 * user can read in /proc. Entries without a value, and names no environment can hold (empty,
 * or with `=`), are left out, as a spawn would.
 */
export function carryEnvironment(environment: NodeJS.ProcessEnv): CarriedEnvironment {
  const env: Record<string, string> = { PATH: systemPath };
  let count = 0;
  for (const [name, value] of Object.entries(environment)) {
    if (value === undefined || name === '' || name.includes('=')) continue;
    env[`${entryPrefix}${count++}`] = `${name}=${value}`;
  }
  return { env, count };
}

/**
 * POSIX shell that writes the `count` carried entries as bwrap arguments to its standard output:
 * `--setenv`, the name (up to the first `=`) and the value, each ended by a NUL (printf's `\0`,
 * a builtin in dash and bash).
 */
function writeEntries(count: number): string {
  return `i=0; while [ "$i" -lt ${count} ]; do eval "entry=\\\${${entryPrefix}$i}"; printf '%s\\0%s\\0%s\\0' --setenv "\${entry%%=*}" "\${entry#*=}"; i=$((i+1)); done`;
}

/**
 * Shell that runs `rest` (which ends by exec'ing bwrap) with descriptor
 * {@link environmentDescriptor} the read end of a pipe carrying the entries. bash reads them
 * from a process substitution and stays the one process (exec'd into bwrap, as callers expect:
 * its exit status and signals are bwrap's); a POSIX sh without one pipes them in (the shell then
 * waits for bwrap, which ends with it: `--die-with-parent`), its standard input kept aside on 7.
 */
export function withEnvironmentDescriptor(
  carried: CarriedEnvironment,
  rest: string,
  shell: 'bash' | 'sh',
): string {
  const fd = environmentDescriptor;
  // Spawned without the environment wrap() returned, the command would start with another: not at all.
  const arrived =
    carried.count === 0
      ? ''
      : `[ -n "\${${entryPrefix}${carried.count - 1}+set}" ] || { echo "agent-sandbox: the command's environment did not arrive (spawn it with the env the sandbox returned); not starting it" >&2; exit 125; }; `;
  if (shell === 'bash') return `${arrived}exec ${fd}< <(${writeEntries(carried.count)}); ${rest}`;
  return `${arrived}{ { ${writeEntries(carried.count)}; } 7<&- | { exec ${fd}<&0 0<&7 7<&-; ${rest}; }; } 7<&0`;
}
