import { spawnSync } from 'node:child_process';
import { trustedProgram } from './trusted-program.js';

/**
 * Each command of a long-lived sandbox in a Landlock domain of its own. The exec helper
 * (exec-helper-source.ts) runs as the same user in the same namespaces as the commands it forks:
 * without this, a command could ptrace it, write its memory (/proc/N/mem), take its descriptors
 * (pidfd_getfd) or kill it — so outlive itself inside the helper, and forge what later commands
 * report — and signal the session's other commands. A process in a Landlock domain can neither
 * trace (nor open /proc/N/mem, /proc/N/fd, /proc/N/environ of, nor pidfd_getfd from) a process
 * outside its domain, and with ABI 6 `LANDLOCK_SCOPE_SIGNAL` it cannot signal one either, nor
 * (`LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET`) connect to an abstract socket made outside it. Its own
 * descendants stay in its domain: it may still trace and signal them.
 *
 * Node cannot make these system calls, so the helper starts each command through perl
 * (`confinementWrapperSource`), which enters a new domain and execs the command: the domain
 * handles no file or network access (the mounts and the seccomp filter do that), only the scopes.
 */

/** Numbers from include/uapi/linux/landlock.h and the generic system call table (x86_64, aarch64 alike). */
const landlock = {
  createRuleset: 444,
  restrictSelf: 446,
  /** `LANDLOCK_CREATE_RULESET_VERSION`: with no attributes, the call answers the ABI version. */
  versionFlag: 1,
  /** The first ABI with `scoped` in `struct landlock_ruleset_attr` (fs, net, scoped: three u64). */
  scopedAbi: 6,
  /** `LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET` (1 << 0) | `LANDLOCK_SCOPE_SIGNAL` (1 << 1). */
  scopes: 3,
  attributeBytes: 24,
} as const;

/** `prctl` by architecture (PR_SET_NO_NEW_PRIVS, which landlock_restrict_self needs; bwrap sets it too). */
const prctlNumbers: Partial<Record<string, number>> = { x64: 157, arm64: 167 };

/** Whether commands can be confined here, and with what. */
export type CommandConfinement =
  | { type: 'landlock'; perl: string; abi: number }
  | { type: 'none'; reason: string };

const probed = new Map<string, CommandConfinement>();

/**
 * Whether this kernel scopes Landlock domains (ABI ≥ 6) and a trusted perl exists to enter one
 * (looked up once, as bubblewrap is: not on a relative PATH entry, in node_modules or in
 * `untrustedRoots`). Probed once per perl per process (one perl start, ~ms).
 */
export function commandConfinement(
  options: { searchPath?: string | undefined; untrustedRoots?: readonly string[] } = {},
): CommandConfinement {
  const perl = trustedProgram('perl', {
    searchPath: options.searchPath ?? process.env.PATH,
    untrustedRoots: options.untrustedRoots ?? [],
  });
  if ('problem' in perl)
    return { type: 'none', reason: `no perl to enter it with: ${perl.problem}` };
  const known = probed.get(perl.path);
  if (known !== undefined) return known;
  const found = probe(perl.path);
  probed.set(perl.path, found);
  return found;
}

function probe(perl: string): CommandConfinement {
  const asked = spawnSync(
    perl,
    [
      '-e',
      `my $abi = syscall(${landlock.createRuleset}, 0, 0, ${landlock.versionFlag}); print $abi < 0 ? "error $!" : "abi $abi"`,
    ],
    { env: {}, encoding: 'utf8', timeout: 10_000 },
  );
  const answer = asked.stdout?.trim() ?? '';
  const abi = /^abi (\d+)$/.exec(answer)?.[1];
  if (abi === undefined) {
    const why = answer.startsWith('error ')
      ? answer.slice('error '.length)
      : (asked.error?.message ?? `perl exited ${asked.status}: ${asked.stderr?.trim() ?? ''}`);
    return { type: 'none', reason: `Landlock is not available (${why})` };
  }
  if (Number(abi) < landlock.scopedAbi) {
    return {
      type: 'none',
      reason: `Landlock ABI ${abi} cannot scope signals (ABI ${landlock.scopedAbi}, Linux 6.12, can)`,
    };
  }
  return { type: 'landlock', perl, abi: Number(abi) };
}

/**
 * The perl program the helper starts each command through: `perl <this file> <file> <args…>`,
 * with an empty environment (no PERL5OPT, locale or library path of the command's can change
 * what it does) and descriptor 3 a socket from the helper. It reads the command's environment
 * from descriptor 3 (`NAME=value` entries, each ended by a NUL, until end of input), enters a
 * new Landlock domain with every scope, and execs the command (`file` looked up on the command's
 * PATH, as spawn does). Descriptor 3 is closed on exec: end of input tells the helper the command
 * runs; should exec fail, its errno comes back as a line and the wrapper exits 127. When the
 * kernel refuses the domain (it should not: the host probed it), the command runs without.
 */
export function confinementWrapperSource(arch: string = process.arch): string {
  const prctl = prctlNumbers[arch];
  return [
    `open(my $channel, '+<&=', 3) or exit 126;`,
    // F_SETFD, FD_CLOEXEC: the command does not inherit it.
    'fcntl($channel, 2, 1);',
    `my $payload = '';`,
    '1 while sysread($channel, $payload, 65536, length $payload);',
    '%ENV = ();',
    'for my $entry (split /\\0/, $payload) { my ($name, $value) = split /=/, $entry, 2; $ENV{$name} = $value if defined $value }',
    `if (syscall(${landlock.createRuleset}, 0, 0, ${landlock.versionFlag}) >= ${landlock.scopedAbi}) {`,
    `  my $attributes = pack('QQQ', 0, 0, ${landlock.scopes});`,
    `  my $ruleset = syscall(${landlock.createRuleset}, $attributes, ${landlock.attributeBytes}, 0);`,
    ...(prctl === undefined ? [] : [`  syscall(${prctl}, 38, 1, 0, 0, 0);`]),
    // The ruleset's descriptor is close-on-exec (the kernel makes it so).
    `  syscall(${landlock.restrictSelf}, $ruleset, 0) if $ruleset >= 0;`,
    '}',
    // The out-of-memory killer's first choice (a raise needs no privilege): not the helper.
    `if (open(my $score, '>', '/proc/self/oom_score_adj')) { print $score '1000'; close $score }`,
    'exec { $ARGV[0] } @ARGV;',
    'syswrite($channel, ($! + 0) . "\\n");',
    'exit 127;',
    '',
  ].join('\n');
}
