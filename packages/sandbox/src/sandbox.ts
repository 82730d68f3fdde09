import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type AllowListProxy, startAllowListProxy } from './allow-list-proxy.js';
import { AutoRunFiles } from './auto-run-files.js';
import { assertRootsUnmoved, directoriesAbove, identities, outermostRoots } from './bound-paths.js';
import {
  type Bubblewrap,
  filterFileFor,
  type Launch,
  mountArguments,
  proxyPort,
  proxySingleStage,
  proxyStages,
  singleStage,
  withLimits,
} from './bubblewrap-command.js';
import { findBubblewrap } from './bubblewrap-lookup.js';
import { commandConfinement } from './command-confinement.js';
import { commandPaths } from './command-paths.js';
import { credentialFreeCopies } from './credential-free-copies.js';
import { explainFailure } from './explain-failure.js';
import { watchRepositories } from './git-repositories.js';
import { launchRoots } from './launch-roots.js';
import { planNetwork } from './network-plan.js';
import { placeholderStateDirectory } from './placeholder-records.js';
import { isInside, realPathOrResolved } from './real-paths.js';
import { type ResourceLimits, resourceLimits } from './resource-limits.js';
import { SandboxUnavailableError } from './sandbox-errors.js';
import { createSandboxHost } from './sandbox-host.js';
import type { Sandbox, SandboxCommand, SandboxStatus } from './sandbox-interface.js';
import type { SandboxOptions } from './sandbox-options.js';
import { seccompFilterDirectory } from './seccomp-file.js';
import { defaultSecretPaths, environmentFilePaths } from './secret-paths.js';

/**
 * Creates a sandbox. With `required` and no working bubblewrap it throws
 * {@link SandboxUnavailableError}; with `auto` it reports the fallback through `onWarning` once,
 * as it does (in either mode) anything the sandbox cannot enforce here.
 */
export function createSandbox(options: SandboxOptions): Sandbox {
  const mode = options.mode ?? 'auto';
  if (!['auto', 'required', 'off'].includes(mode)) {
    throw new TypeError(`sandbox mode must be auto, required or off, got ${String(mode)}`);
  }
  const allowUnixSockets = [...(options.allowUnixSockets ?? [])];
  for (const socket of allowUnixSockets) {
    if (typeof socket !== 'string' || !path.isAbsolute(socket)) {
      throw new TypeError(
        `sandbox allowUnixSockets: expected absolute paths, got ${JSON.stringify(socket)}`,
      );
    }
  }
  const network = options.network ?? 'off';
  const writableRoots = options.writableRoots.map((root) => realPathOrResolved(root));
  // What is bound writable: a root inside another is writable through it, and bound again it
  // would be a mount target a command could swap for a link (see outermostRoots).
  const boundRoots = outermostRoots(writableRoots);
  const readableRoots = (options.readableRoots ?? []).map((root) => realPathOrResolved(root));
  const { bubblewrap, problem } = findBubblewrap({
    mode,
    bwrapPath: options.bwrapPath,
    writableRoots,
  });
  if (mode === 'required' && problem !== undefined) {
    throw new SandboxUnavailableError(`The sandbox is required but cannot run: ${problem}`);
  }
  const warn =
    options.onWarning ??
    ((message: string) => process.emitWarning(message, { code: 'AGENT_SANDBOX_UNAVAILABLE' }));
  if (mode === 'auto' && problem !== undefined) {
    warn(`Commands run WITHOUT an OS sandbox: ${problem}`);
  }

  const limits: ResourceLimits = resourceLimits({
    ...(options.maxProcesses === undefined ? {} : { maxProcesses: options.maxProcesses }),
    ...(options.maxMemoryBytes === undefined ? {} : { maxMemoryBytes: options.maxMemoryBytes }),
    ...(options.maxFileBytes === undefined ? {} : { maxFileBytes: options.maxFileBytes }),
    ...(options.cgroups === undefined ? {} : { cgroups: options.cgroups }),
    roots: writableRoots,
    active: bubblewrap !== undefined,
  });
  const processLimit = limits.processRlimit;
  const limitations = [...(bubblewrap?.features.limitations ?? []), ...limits.limitations];
  const { nested, socatPath, unixSocketsAllowed, unixSockets, ...networkPlan } = planNetwork({
    bubblewrap,
    network,
    allowUnixSockets,
    writableRoots,
  });
  limitations.push(...networkPlan.limitations);
  // The long-lived sandbox's commands, each in a Landlock domain of its own (command-confinement.ts).
  const confinement =
    bubblewrap === undefined
      ? undefined
      : commandConfinement({ searchPath: process.env.PATH, untrustedRoots: writableRoots });
  if (confinement?.type === 'none') {
    limitations.push(
      `commands of a long-lived sandbox (createHost) can trace, signal and take descriptors from its helper and from each other: ${confinement.reason}`,
    );
  }

  const home = realPathOrResolved(os.homedir());
  const ownState = placeholderStateDirectory();
  // The directories above the workspace are read for .env files once, here. Which candidates
  // exist is looked up per command (a stat each): a credential, or a per-user directory, made
  // after the sandbox was created is hidden too.
  const candidates = [
    ...(options.secretPaths ?? defaultSecretPaths(home)),
    ...(options.hideEnvironmentFiles === false || bubblewrap === undefined
      ? []
      : environmentFilePaths({ roots: writableRoots, home })),
    // The record of the auto-run placeholders: a forged one would be a list of folders to remove.
    ownState,
  ];
  const protectGit = options.protectGitDirectories !== false && bubblewrap !== undefined;
  const protectStartup = options.protectStartupFiles !== false && bubblewrap !== undefined;
  // Repositories nested in the workspace are searched for once, here (bounded); the roots' own
  // `.git` is looked up per command, so a repository made at a root since is protected too.
  const repositories = protectGit ? watchRepositories(writableRoots) : undefined;
  if (repositories?.incomplete !== undefined) {
    limitations.push(
      `the search for git repositories inside the writable roots ${repositories.incomplete}: a .git below where it stopped is writable`,
    );
  }
  // Git configuration and shell startup files that hold credentials are shown as copies without them.
  const sharedFileCopies =
    bubblewrap === undefined
      ? undefined
      : credentialFreeCopies(() => ({
          roots: writableRoots,
          repositories: repositories?.paths() ?? [],
          home,
          env: process.env,
        }));
  // Editors' and tools' files that run later without asking (`.vscode`, `.devcontainer`…).
  const autoRunFiles =
    options.protectAutoRunFiles !== false && bubblewrap !== undefined
      ? new AutoRunFiles(writableRoots, protectStartup ? home : undefined)
      : undefined;
  const protectedPaths = commandPaths({
    active: bubblewrap !== undefined,
    writableRoots,
    home,
    secretCandidates: candidates,
    hiddenPaths: options.hiddenPaths,
    hiddenPatterns: options.hiddenPatterns,
    readOnlyPaths: options.readOnlyPaths,
    readOnlyPatterns: options.readOnlyPatterns,
    repositories,
    protectStartup,
    autoRunFiles,
  });
  // Each startup file protected, with who the directories above it were: one at the same path
  // under a directory moved in since is the command's (see ancestorIdentity).
  let startupFilesSeen = protectedPaths.startupFileIdentities();
  const status: SandboxStatus = {
    active: bubblewrap !== undefined,
    mode,
    mechanism: bubblewrap !== undefined ? 'bubblewrap' : 'none',
    network,
    writableRoots,
    unixSockets,
    // The sandbox's own state is hidden too, but is no secret of the user's.
    get hiddenPaths() {
      const own = realPathOrResolved(ownState);
      return protectedPaths
        .masks()
        .map((mask) => mask.path)
        .filter((hidden) => hidden !== ownState && hidden !== own);
    },
    limitations,
    limits: limits.status,
    ...(problem === undefined ? {} : { reason: problem }),
  };
  if (bubblewrap !== undefined && limitations.length > 0) {
    warn(`The OS sandbox cannot enforce everything here: ${limitations.join('; ')}`);
  }
  let proxy: Promise<AllowListProxy> | undefined;
  let proxySocket: string | undefined;

  /** What every command's environment gets in the sandbox: TMPDIR, and the proxy's variables. */
  const environmentOf = (base: NodeJS.ProcessEnv): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = { ...base, TMPDIR: '/tmp' };
    if (typeof network === 'object') {
      const url = `http://127.0.0.1:${proxyPort}`;
      for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY']) {
        env[name] = url;
      }
      env.NO_PROXY = '';
      env.no_proxy = '';
    }
    return env;
  };

  /**
   * The mounts for commands launching `programs`, secrets looked up now, `extraReadable` shown
   * too; without `writable`, the writable roots are bound read-only (see `readOnlyView`).
   */
  const mountsFor = (
    programs: readonly SandboxCommand[],
    extraReadable: readonly string[],
    writable: boolean,
  ): { args: string[]; readOnlyInside: string[]; pinned: string[] } => {
    assertRootsUnmoved(boundRoots);
    const masks = protectedPaths.masks();
    // The program launched (and a script's interpreter) when it lives where the sandbox puts
    // an empty directory, e.g. a toolchain under a temporary home: shown read-only.
    const launched = programs
      .flatMap((program) => launchRoots(program))
      .filter((root) => !writableRoots.some((writable) => isInside(writable, root)));
    const readOnlyInside = protectedPaths.readOnly();
    const replacedFiles = sharedFileCopies?.current() ?? [];
    // What holds a protected or hidden path cannot be renamed: a mount point cannot (see pinned).
    // Pins are bound writable: a read-only view has none (nothing in it can be renamed).
    const pinned = writable
      ? directoriesAbove(
          [
            ...readOnlyInside,
            ...masks.map((mask) => mask.path),
            ...replacedFiles.map((file) => file.path),
          ],
          boundRoots,
        )
      : [];
    // This package's own files, where a writable root holds them (see MountPlan.ownPaths).
    const ownPaths = [
      ...(bubblewrap?.features.seccomp === undefined ? [] : [seccompFilterDirectory()]),
      ...(proxySocket === undefined ? [] : [path.dirname(proxySocket)]),
      ...extraReadable,
    ];
    const args = mountArguments({
      readableRoots: [...readableRoots, ...new Set(launched), ...extraReadable],
      writableRoots: boundRoots,
      ...(writable ? {} : { rootsReadOnly: true }),
      readOnlyInside,
      masks,
      replacedFiles,
      allowUnixSockets,
      pinned,
      ownPaths,
      ...(limits.tmpfsBytes === undefined || bubblewrap?.features.tmpfsSize !== true
        ? {}
        : { tmpfsBytes: limits.tmpfsBytes }),
    });
    return { args, readOnlyInside, pinned };
  };

  /**
   * bwrap (through its stages for the allow-listed network) around `command`, which gets
   * `environment` inside; what runs outside gets an environment of its own.
   */
  const launchInvocation = (
    bubblewrap: Bubblewrap,
    mounts: readonly string[],
    pinned: readonly string[],
    cwd: string,
    command: { argv: readonly string[]; environment: NodeJS.ProcessEnv },
  ): Launch => {
    const { environment } = command;
    const inner = withLimits(command.argv, {
      ...(processLimit === undefined ? {} : { processes: processLimit }),
      ...(limits.fileBytes === undefined ? {} : { fileBytes: limits.fileBytes }),
      ...(limits.dataBytes === undefined ? {} : { dataBytes: limits.dataBytes }),
    });
    const filterFile = filterFileFor(bubblewrap, unixSocketsAllowed);
    if (typeof network === 'object') {
      if (proxySocket === undefined) throw new Error('the allow-list proxy is not started');
      const stage = { bubblewrap, mounts, pinned, proxySocket, cwd, command: inner, environment };
      return nested && filterFile !== undefined
        ? proxyStages({
            ...stage,
            filterFile,
            writableRoots: boundRoots,
            ...(socatPath === undefined ? {} : { socatPath }),
          })
        : proxySingleStage({ ...stage, filterFile });
    }
    return singleStage({
      bubblewrap,
      mounts,
      pinned,
      network,
      filterFile,
      cwd,
      command: inner,
      environment,
    });
  };

  const startProxy = async (): Promise<void> => {
    if (typeof network !== 'object') return;
    proxy ??= startAllowListProxy(network.allowHosts);
    proxySocket = (await proxy).socketPath;
  };

  const invocationFor = async (
    bubblewrap: Bubblewrap,
    command: SandboxCommand,
    writable: boolean,
  ): Promise<Launch> => {
    await startProxy();
    const { args: mounts, pinned } = mountsFor([command], [], writable);
    return launchInvocation(bubblewrap, mounts, pinned, command.cwd, {
      argv: [command.file, ...command.args],
      environment: environmentOf(command.env),
    });
  };

  let readOnlyView: Sandbox | undefined;
  /**
   * The sandbox's methods; without `writable`, its read-only view: the same sandbox (proxy,
   * cgroups, masks) with the writable roots bound read-only, whose hosts are its own.
   */
  const sandboxFor = (writable: boolean): Sandbox => ({
    status: writable ? status : readOnlyStatus(status),
    describe() {
      if (!status.active) return `NOT sandboxed (${status.reason ?? 'unavailable'})`;
      const net =
        network === 'off'
          ? 'no network'
          : network === 'on'
            ? 'network on'
            : `network only to ${network.allowHosts.join(', ')}`;
      const sockets =
        unixSockets === 'blocked'
          ? 'no Unix sockets'
          : allowUnixSockets.length > 0
            ? `Unix sockets allowed (${allowUnixSockets.join(', ')})`
            : `Unix sockets NOT blocked (${limitations.find((entry) => /Unix sockets/.test(entry)) ?? 'no seccomp filter'})`;
      const bounds = limits.describe();
      const writes = writable
        ? `writes only in ${writableRoots.join(', ')} and a private /tmp`
        : 'read-only: writes only in a private /tmp';
      return `sandboxed (bubblewrap): ${writes}; ${net}; ${sockets}${bounds === '' ? '' : `; ${bounds}`}`;
    },
    async wrap(command) {
      if (bubblewrap === undefined) return command;
      const invocation = await invocationFor(bubblewrap, command, writable);
      // The command's environment reaches it through bwrap (see outside-environment.ts).
      const wrapped = { cwd: command.cwd, env: invocation.env };
      const cgroups = limits.cgroups;
      if (cgroups === undefined) return { ...invocation, ...wrapped };
      cgroups.releaseIdle();
      const cgroup = cgroups.create();
      return {
        ...cgroup.enter(invocation),
        ...wrapped,
        finish: async () => {
          const events = cgroup.events();
          await cgroup.release();
          return events;
        },
      };
    },
    createHost() {
      if (bubblewrap === undefined) return undefined;
      // Started lazily, on the first command: the proxy (if any) is up by then.
      return createSandboxHost({
        environment: environmentOf,
        ...(confinement?.type === 'landlock' ? { confinement: { perl: confinement.perl } } : {}),
        launch: async (command, { pipeDirectory, helperArgs }) => {
          await startProxy();
          const helper = { ...command, file: process.execPath, args: [] };
          const wrapper =
            confinement?.type === 'landlock'
              ? [{ ...command, file: confinement.perl, args: [] }]
              : [];
          const {
            args: mounts,
            readOnlyInside,
            pinned,
          } = mountsFor([command, helper, ...wrapper], [pipeDirectory], writable);
          const cwd = writableRoots.find((root) => fs.existsSync(root)) ?? '/';
          return {
            // The helper and the sandbox's init can be read by the commands (/proc/N/environ):
            // they get nothing but PATH. Each command gets its own environment.
            ...launchInvocation(bubblewrap, mounts, pinned, cwd, {
              argv: [process.execPath, ...helperArgs],
              environment: { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' },
            }),
            cwd,
            // A protected path replaced at the same path (a directory above it moved away, the
            // mount with it) is another file: the running sandbox does not cover it, a new one will.
            key: JSON.stringify([mounts, identities(readOnlyInside)]),
            // One cgroup for the whole sandbox: its commands share the limits.
            ...(limits.cgroups === undefined ? {} : { cgroup: limits.cgroups.create }),
          };
        },
      });
    },
    readOnlyView() {
      if (!writable) return this;
      readOnlyView ??= sandboxFor(false);
      return readOnlyView;
    },
    checkPlanted() {
      const planted = repositories?.check() ?? [];
      const now = protectedPaths.startupFileIdentities();
      for (const [file, above] of now) if (startupFilesSeen.get(file) !== above) planted.push(file);
      startupFilesSeen = now;
      return planted;
    },
    plantedCheckIncomplete() {
      const why = repositories?.checkIncomplete;
      return why === undefined
        ? undefined
        : `the search for repositories made by commands ${why}; the next check goes on from there`;
    },
    explainFailure(output) {
      if (!status.active) return undefined;
      return explainFailure(output, {
        writableRoots,
        ...(writable ? {} : { readOnly: true }),
        network,
        hiddenPaths: status.hiddenPaths,
        unixSockets,
        startupFiles: protectedPaths.startupFiles(),
        autoRunFiles: autoRunFiles?.current() ?? [],
        ...(limits.status.maxProcesses === undefined
          ? {}
          : { maxProcesses: limits.status.maxProcesses }),
        ...(limits.fileBytes === undefined ? {} : { maxFileBytes: limits.fileBytes }),
        ...(limits.dataBytes === undefined ? {} : { maxProcessDataBytes: limits.dataBytes }),
      });
    },
    explainLimits(events) {
      return status.active ? limits.explain(events) : undefined;
    },
    async close() {
      // The view shares all this with its sandbox, which closes it.
      if (!writable) return;
      if (proxy !== undefined) await (await proxy).close();
      await limits.cgroups?.releaseAll();
      autoRunFiles?.removePlaceholders();
      sharedFileCopies?.dispose();
    },
  });
  return sandboxFor(true);
}

/** A read-only view's status: no writable roots. */
function readOnlyStatus(status: SandboxStatus): SandboxStatus {
  return Object.defineProperties(
    { ...status, writableRoots: [], readOnly: true },
    { hiddenPaths: { get: () => status.hiddenPaths, enumerable: true } },
  );
}
