import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { type BubblewrapFeatures, hardeningArguments } from './bubblewrap-probe.js';
import type { ReplacedFile } from './credential-free-copies.js';
import {
  closeDescriptorsScript,
  closingShell,
  inheritedDescriptors,
} from './inherited-descriptors.js';
import {
  carryEnvironment,
  environmentArguments,
  environmentDescriptor,
  systemPath,
  withEnvironmentDescriptor,
} from './outside-environment.js';
import { closingShellOptions, systemShellOptions } from './outside-shells.js';
import { isInside } from './real-paths.js';
import { seccompDescriptor, seccompFilterFile } from './seccomp-file.js';
import type { SecretMask } from './secret-paths.js';

/** What a sandboxed command may see, fixed when the sandbox is created. */
export interface MountPlan {
  readableRoots: readonly string[];
  writableRoots: readonly string[];
  /** Bind `writableRoots` read-only (a read-only view: only the in-memory /tmp is writable) [false]. */
  rootsReadOnly?: boolean;
  /** Directories inside writable roots bound read-only over them (a repository's `.git`). */
  readOnlyInside?: readonly string[];
  masks: readonly SecretMask[];
  /**
   * Files shown as a copy (bound read-only over them, before the masks): git configuration and
   * shell startup files with their credentials replaced (credential-free-copies.ts) [none].
   */
  replacedFiles?: readonly ReplacedFile[];
  /** Unix sockets bound in (from under the private /tmp and /run as well). */
  allowUnixSockets: readonly string[];
  /**
   * Directories inside writable roots bound over themselves (writable, from a descriptor: see
   * {@link pinDescriptorsScript}), outer ones first, so that they cannot be renamed: each holds a
   * protected or hidden path, which a rename would carry away from where the next sandbox looks.
   */
  pinned?: readonly string[];
  /**
   * This package's own files — the seccomp filters, the proxy's socket, a host's pipes and
   * helper — bound read-only over themselves after the writable roots where one holds them (the
   * workspace is the temporary directory): a command there could lift the filter for the next
   * command, point the proxy's socket at another daemon's, or rewrite the helper [none].
   */
  ownPaths?: readonly string[];
  /**
   * Bytes the in-memory file systems a command may write may hold, where no memory cgroup counts
   * their files: `/tmp` half, `/dev/shm` and `/run` a quarter each, each hidden directory 1 MiB
   * [unbounded: the kernel's default, half of the memory each].
   */
  tmpfsBytes?: number;
}

/** The descriptor the first pinned directory is opened on (9 is the seccomp filter's). */
export const firstPinDescriptor = 10;

/**
 * Shell (bash) that opens each of `pinned` on descriptors from {@link firstPinDescriptor} on,
 * for `--bind-fd`: it enters each with `cd -P` and checks the physical path is the path asked
 * for, so the descriptor is that directory and no link was followed. A `--bind` by path would
 * follow a link put there meanwhile (by a command of another sandbox) and make its target
 * writable; from a descriptor, a link at the destination moves only where the workspace's own
 * directory shows inside. One that changed ends the start (exit 125): fail closed.
 */
export function pinDescriptorsScript(pinned: readonly string[]): string {
  if (pinned.length === 0) return '';
  const check =
    'pin() { cd -P -- "$1" 2>/dev/null && [ "$PWD" = "$1" ] || { echo "agent-sandbox: $1 was moved or replaced while the sandbox started; not starting it" >&2; exit 125; }; }; ';
  const opens = pinned.map(
    (directory, index) => `pin ${shellWord(directory)} && exec ${firstPinDescriptor + index}<.; `,
  );
  return `${check}${opens.join('')}cd / && `;
}

function shellWord(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/** The bwrap binary and what it can enforce. */
export interface Bubblewrap {
  path: string;
  features: BubblewrapFeatures;
}

/** A program and its arguments. */
export interface Invocation {
  file: string;
  args: string[];
}

/**
 * A sandbox's start: the program, its arguments and the environment to spawn it with — the
 * outside stages' own (see outside-environment.ts), which carries the command's to bwrap.
 */
export interface Launch extends Invocation {
  env: Record<string, string>;
}

/** Port the allow-list proxy listens on inside the sandbox (its own network namespace). */
export const proxyPort = 3128;

/**
 * Shell that starts socat (`socat`, a shell word: a path or a name) carrying
 * loopback:{@link proxyPort} to the proxy's Unix socket at `socketPath` (a shell word), and
 * waits until it listens (at most ~3 s). socat does not get the descriptor the command's
 * environment arrives on (the outer stage passes it to the inner bwrap).
 */
function relayToProxy(socketPath: string, socat = 'socat'): string {
  const fd = environmentDescriptor;
  return (
    `${socat} TCP-LISTEN:${proxyPort},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${socketPath} 2>/dev/null ${fd}<&- & ` +
    `i=0; until [ $i -ge 300 ] || ${socat} -u OPEN:/dev/null TCP:127.0.0.1:${proxyPort} 2>/dev/null ${fd}<&-; do i=$((i+1)); sleep 0.01; done; `
  );
}

/**
 * `command` started through `/bin/sh` inside the sandbox after it sets its rlimits, soft and
 * hard (the command cannot raise them): RLIMIT_NPROC to `processes` — set inside, the kernel
 * counts it against the processes and threads of this user in the sandbox's own user namespace,
 * so it bounds this sandbox alone (a fork bomb stops there, not at the machine's last pid), not
 * the user's other processes; bash spells it `ulimit -u`, dash `ulimit -p` — RLIMIT_FSIZE to
 * `fileBytes` (`ulimit -f`, in 512-byte blocks for any POSIX sh) and RLIMIT_DATA to `dataBytes`
 * (`ulimit -d`, in KiB for bash and dash) — and, always, RLIMIT_CORE to 0 (`ulimit -c 0`): no
 * process inside dumps core. Its hard limit was the host's (unlimited), so `ulimit -c unlimited`
 * and a crash wrote a `core` file of the crashed process's memory wherever `core_pattern` says —
 * the workspace with a relative pattern — and a piping pattern (systemd-coredump, apport) hands
 * the dump to a helper running as root on the host, which stores it outside the sandbox unless
 * the crashed process's RLIMIT_CORE says no core. A limit that cannot be set ends the command.
 */
export function withLimits(
  command: readonly string[],
  limits: { processes?: number; fileBytes?: number; dataBytes?: number },
): string[] {
  const steps: string[] = [
    `{ ulimit -c 0 2>/dev/null || { echo 'agent-sandbox: cannot turn off core dumps' >&2; exit 126; }; }`,
  ];
  if (limits.processes !== undefined)
    steps.push(
      `{ ulimit -u ${limits.processes} 2>/dev/null || ulimit -p ${limits.processes} 2>/dev/null || { echo 'agent-sandbox: cannot set the process limit' >&2; exit 126; }; }`,
    );
  if (limits.fileBytes !== undefined)
    steps.push(
      `{ ulimit -f ${Math.ceil(limits.fileBytes / 512)} 2>/dev/null || { echo 'agent-sandbox: cannot set the file size limit' >&2; exit 126; }; }`,
    );
  if (limits.dataBytes !== undefined)
    steps.push(
      `{ ulimit -d ${Math.ceil(limits.dataBytes / 1024)} 2>/dev/null || { echo 'agent-sandbox: cannot set the memory limit' >&2; exit 126; }; }`,
    );
  return ['/bin/sh', '-c', `${steps.join('; ')}; exec "$@"`, 'agent-sandbox', ...command];
}

/** {@link withLimits} with the process limit alone. */
export function withProcessLimit(command: readonly string[], limit: number): string[] {
  return withLimits(command, { processes: limit });
}

/** The bwrap arguments that build the sandbox's file system view. */
export function mountArguments(plan: MountPlan): string[] {
  // Without a memory cgroup a tmpfs is bounded by its size alone (the kernel's default is half of
  // the memory, for each): /tmp, /dev/shm, /run and every hidden directory filled together took
  // all of it, and the kernel's out-of-memory killer, finding no process holding it, ended others.
  const sized = (fraction: number) =>
    plan.tmpfsBytes === undefined
      ? []
      : ['--size', String(Math.max(1024 * 1024, Math.floor(plan.tmpfsBytes * fraction)))];
  const maskSize = plan.tmpfsBytes === undefined ? [] : ['--size', String(1024 * 1024)];
  const args = [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    // Sysctls check no capability, only the file mode: root inside (the same kernel uid) could
    // write global ones — kernel.core_pattern runs a program as root on the host.
    '--ro-bind',
    '/proc/sys',
    '/proc/sys',
    // A private, empty /tmp and /dev/shm per command: nothing written there outlives it, and
    // other programs' files and unix sockets there (ssh-agent, tmux, X11) are out of reach.
    ...sized(1 / 2),
    '--tmpfs',
    '/tmp',
    ...sized(1 / 4),
    '--tmpfs',
    '/dev/shm',
    // /run holds the host's service sockets (docker, dbus, systemd, user agents): hidden.
    ...sized(1 / 4),
    '--tmpfs',
    '/run',
  ];
  // A readable root inside a hidden path (one session's directory inside a per-user one) is
  // bound after the hiding, so it alone shows through.
  const insideMask = (root: string) =>
    plan.masks.some((mask) => mask.path !== root && isInside(mask.path, root));
  const bindReadable = (root: string) => {
    if (fs.existsSync(root)) args.push('--ro-bind', root, root);
  };
  for (const root of plan.readableRoots) if (!insideMask(root)) bindReadable(root);
  const rootBind = plan.rootsReadOnly === true ? '--ro-bind' : '--bind';
  for (const root of plan.writableRoots) args.push(rootBind, root, root);
  // Before what they hold is bound read-only or hidden: those mounts then sit on the pinned ones.
  for (const [index, directory] of (plan.pinned ?? []).entries()) {
    args.push('--bind-fd', String(firstPinDescriptor + index), directory);
  }
  for (const own of plan.ownPaths ?? []) {
    if (plan.writableRoots.some((root) => isInside(root, own)) && fs.existsSync(own))
      args.push('--ro-bind', own, own);
  }
  // A mount point cannot be renamed or removed: the command cannot swap it for a `.git` of its own.
  for (const inside of plan.readOnlyInside ?? []) args.push('--ro-bind', inside, inside);
  for (const { path, copy } of plan.replacedFiles ?? []) args.push('--ro-bind', copy, path);
  for (const mask of plan.masks) {
    if (mask.directory) args.push(...maskSize, '--tmpfs', mask.path);
    else args.push('--ro-bind', '/dev/null', mask.path);
  }
  for (const root of plan.readableRoots) if (insideMask(root)) bindReadable(root);
  // After the masks: a socket the user allowed stays reachable even under a hidden directory.
  for (const socket of plan.allowUnixSockets) args.push('--ro-bind-try', socket, socket);
  return args;
}

/** The hardening flags plus `--seccomp` when a filter file is given. */
function lockdown(features: BubblewrapFeatures, filterFile: string | undefined): string[] {
  return [
    ...hardeningArguments(features),
    ...(filterFile === undefined ? [] : ['--seccomp', String(seccompDescriptor)]),
  ];
}

/** The filter file for this sandbox, or undefined when no filter can be loaded here. */
export function filterFileFor(
  bubblewrap: Bubblewrap,
  allowUnixSockets: boolean,
): string | undefined {
  const architecture = bubblewrap.features.seccomp;
  return architecture === undefined
    ? undefined
    : seccompFilterFile({ architecture, allowUnixSockets });
}

/**
 * Starts bwrap through a shell that hands it the command's environment on a descriptor (see
 * outside-environment.ts: nothing outside the sandbox runs with it), opens the filter when there
 * is one, and first closes the descriptors this process inherited: bwrap would pass them on to
 * the command (and keep them itself, as pid 1 inside). The shell is bash where there is one
 * (dash cannot close or pin descriptors above 9); without bash, /bin/sh — and it throws when
 * descriptors must be closed or pinned: fail closed rather than hand the command a way out.
 * `args` hold {@link environmentArguments} where the bwrap that starts the command reads them.
 */
function launch(
  bubblewrap: Bubblewrap,
  filterFile: string | undefined,
  args: string[],
  pinned: readonly string[],
  environment: NodeJS.ProcessEnv,
): Launch {
  const inherited = inheritedDescriptors();
  const shell = closingShell();
  if (shell === undefined && (inherited.length > 0 || pinned.length > 0))
    throw new Error(
      inherited.length > 0
        ? `this process holds open file descriptors (${inherited.join(', ')}) that a sandboxed command would inherit, and there is no bash to close them with; start it without them`
        : `the sandbox needs bash to keep ${pinned[0]} (it holds a protected or hidden path) from being moved, and there is none`,
    );
  const carried = carryEnvironment(environment);
  // Inherited ones closed first: a pinned directory's descriptor may reuse a number.
  const script = closeDescriptorsScript(inherited) + pinDescriptorsScript(pinned);
  const start =
    filterFile === undefined
      ? 'exec "$@"'
      : `filter=$1; shift; exec "$@" ${seccompDescriptor}<"$filter"`;
  return {
    file: shell ?? '/bin/sh',
    args: [
      ...(shell === undefined ? systemShellOptions() : closingShellOptions),
      '-c',
      script + withEnvironmentDescriptor(carried, start, shell === undefined ? 'sh' : 'bash'),
      'agent-sandbox',
      ...(filterFile === undefined ? [] : [filterFile]),
      bubblewrap.path,
      ...args,
    ],
    env: carried.env,
  };
}

/** One bwrap: network off (its own namespace, loopback only) or on (the host's). */
export function singleStage(options: {
  bubblewrap: Bubblewrap;
  mounts: readonly string[];
  network: 'off' | 'on';
  filterFile: string | undefined;
  cwd: string;
  command: readonly string[];
  /** The command's environment: set inside the sandbox alone. */
  environment: NodeJS.ProcessEnv;
  /** {@link MountPlan.pinned}, as the mounts name them. */
  pinned: readonly string[];
}): Launch {
  const args = [
    ...environmentArguments,
    ...options.mounts,
    '--unshare-all',
    ...(options.network === 'on' ? ['--share-net'] : []),
    ...lockdown(options.bubblewrap.features, options.filterFile),
    '--die-with-parent',
    '--new-session',
    '--chdir',
    options.cwd,
    '--',
    ...options.command,
  ];
  return launch(options.bubblewrap, options.filterFile, args, options.pinned, options.environment);
}

/**
 * The allow-listed network in two bwraps. The outer one owns a network namespace with only
 * loopback, where socat carries 127.0.0.1:{@link proxyPort} to the proxy's Unix socket outside;
 * the inner one is the sandbox proper, in that network namespace but its own pid namespace, with
 * the seccomp filter. socat needs a Unix socket, the command must not have one: nesting lets the
 * filter apply to the command alone, and the command can neither see nor trace socat.
 */
export function proxyStages(options: {
  bubblewrap: Bubblewrap;
  mounts: readonly string[];
  writableRoots: readonly string[];
  filterFile: string;
  proxySocket: string;
  /** socat's real path, found where commands cannot replace it (see trustedProgram) [on {@link systemPath}]. */
  socatPath?: string;
  cwd: string;
  command: readonly string[];
  /** The command's environment: set inside the sandbox proper alone (the inner bwrap). */
  environment: NodeJS.ProcessEnv;
  /** {@link MountPlan.pinned}, as the mounts name them. */
  pinned: readonly string[];
}): Launch {
  const inner = [
    // The inner bwrap reads the command's environment: the outer one passes the descriptor on.
    ...environmentArguments,
    ...options.mounts,
    // Its own user namespace (--disable-userns brings one too) and pid namespace: socat's is out of sight.
    ...(options.bubblewrap.features.disableUserNamespaces ? [] : ['--unshare-user']),
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...lockdown(options.bubblewrap.features, options.filterFile),
    '--die-with-parent',
    '--new-session',
    '--chdir',
    options.cwd,
    '--',
    ...options.command,
  ];
  // The inner bwrap is named by its real path; it sets the command's environment itself.
  const socat = options.socatPath === undefined ? 'socat' : shellWord(options.socatPath);
  const script = `proxy=$1; shift; PATH=${systemPath}; ${relayToProxy('"$proxy"', socat)}${uncoverProc}exec "$@"`;
  const outer = [
    // The outer stage (its shell, socat, the inner bwrap) runs with the system PATH alone.
    '--clearenv',
    '--setenv',
    'PATH',
    systemPath,
    ...outerStage,
    // Bound writable here too: the inner bwrap cannot make writable what it gets read-only.
    ...options.writableRoots.flatMap((root) => ['--bind', root, root]),
    '--',
    '/bin/sh',
    '-c',
    script,
    'agent-sandbox-proxy',
    options.proxySocket,
    options.bubblewrap.path,
    ...inner,
  ];
  return launch(options.bubblewrap, options.filterFile, outer, options.pinned, options.environment);
}

/**
 * The outer stage: the host's file system read-only (socat and the proxy socket), a fresh /proc
 * for its pid namespace, and its own user, network and pid namespaces — all of it, socat
 * included, ends with the outer bwrap.
 */
const outerStage = [
  '--ro-bind',
  '/',
  '/',
  '--dev',
  '/dev',
  '--proc',
  '/proc',
  '--unshare-user',
  '--unshare-net',
  '--unshare-pid',
  '--die-with-parent',
];

/**
 * bubblewrap run by root covers /proc's writable corners (irq, bus, sys, sysrq-trigger) with
 * read-only mounts, and the kernel refuses a nested /proc while any part of the outer one is
 * covered: the outer stage uncovers them (nothing but our script and socat runs there).
 */
const uncoverProc =
  process.getuid?.() === 0
    ? 'umount /proc/irq /proc/bus /proc/sys /proc/sysrq-trigger 2>/dev/null; '
    : '';

const nestingProbes = new Map<string, string | undefined>();

/**
 * Whether the two-stage proxy sandbox can run here (the kernel may refuse the nested /proc, e.g.
 * under a container's masked /proc). Runs it once per binary with `true`; undefined when it works.
 */
export function nestingProblem(bubblewrap: Bubblewrap): string | undefined {
  if (nestingProbes.has(bubblewrap.path)) return nestingProbes.get(bubblewrap.path);
  let problem: string | undefined;
  const filterFile = filterFileFor(bubblewrap, false);
  if (filterFile === undefined) problem = 'no seccomp filter here';
  else {
    const inner = [
      '--ro-bind',
      '/',
      '/',
      '--proc',
      '/proc',
      '--unshare-user',
      '--unshare-pid',
      ...lockdown(bubblewrap.features, filterFile),
      '--die-with-parent',
      'true',
    ];
    const outer = [
      ...outerStage,
      '--',
      '/bin/sh',
      '-c',
      `PATH=${systemPath}; ${uncoverProc}exec "$@"`,
      'agent-sandbox-probe',
      bubblewrap.path,
      ...inner,
    ];
    const command = launch(bubblewrap, filterFile, outer, [], {});
    const result = spawnSync(command.file, command.args, {
      env: command.env,
      timeout: 10_000,
      encoding: 'utf8',
    });
    if (result.error !== undefined) problem = result.error.message;
    else if (result.status !== 0) {
      problem = (result.stderr ?? '').trim() || `exit ${result.status ?? result.signal}`;
    }
  }
  nestingProbes.set(bubblewrap.path, problem);
  return problem;
}

/**
 * The allow-listed network where bwrap cannot nest: one bwrap, socat inside it next to the
 * command. socat needs a Unix socket to reach the proxy, so the filter given here must allow
 * them — for the command too (the status says so).
 */
export function proxySingleStage(options: {
  bubblewrap: Bubblewrap;
  mounts: readonly string[];
  filterFile: string | undefined;
  proxySocket: string;
  cwd: string;
  command: readonly string[];
  /** The command's environment: set inside the sandbox alone (socat runs there with it). */
  environment: NodeJS.ProcessEnv;
  /** {@link MountPlan.pinned}, as the mounts name them. */
  pinned: readonly string[];
}): Launch {
  const inside = '/tmp/.agent-sandbox-proxy.sock';
  const args = [
    ...environmentArguments,
    ...options.mounts,
    '--ro-bind',
    options.proxySocket,
    inside,
    '--unshare-all',
    ...lockdown(options.bubblewrap.features, options.filterFile),
    '--die-with-parent',
    '--new-session',
    '--chdir',
    options.cwd,
    '--',
    '/bin/sh',
    '-c',
    `${relayToProxy(inside)}exec "$@"`,
    'sandbox',
    ...options.command,
  ];
  return launch(options.bubblewrap, options.filterFile, args, options.pinned, options.environment);
}
