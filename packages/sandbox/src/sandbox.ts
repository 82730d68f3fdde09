import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type AllowListProxy, startAllowListProxy } from './allow-list-proxy.js';

/** `auto`: sandbox where available, else run unsandboxed with a warning; `required`: refuse without it; `off`: never. */
export type SandboxMode = 'auto' | 'required' | 'off';

/** What the sandboxed processes may reach: nothing, everything, or only the listed hosts. */
export type SandboxNetwork = 'off' | 'on' | { allowHosts: readonly string[] };

/** Options of {@link createSandbox}. */
export interface SandboxOptions {
  /** [auto] */
  mode?: SandboxMode;
  /** Directories the processes may write (the workspace roots); everything else is read-only. */
  writableRoots: readonly string[];
  /**
   * Directories under `/tmp` or `/run` the processes must still read (those two are replaced by
   * empty, private ones — hiding other programs' files and unix sockets): e.g. a project or its
   * `node_modules` that lives in `/tmp` [none]. One inside a secret path is still readable (it
   * is bound after the secret is hidden).
   */
  readableRoots?: readonly string[];
  /** Paths hidden from the processes (an empty directory or file in their place) [defaultSecretPaths()]. */
  secretPaths?: readonly string[];
  /** [off] */
  network?: SandboxNetwork;
  /** The bubblewrap binary [`bwrap` on PATH]. */
  bwrapPath?: string;
  /** Told once when `auto` falls back to no sandbox [process.emitWarning]. */
  onWarning?: (message: string) => void;
}

/** Whether the sandbox is in force, and why not when it is not. */
export interface SandboxStatus {
  active: boolean;
  mode: SandboxMode;
  /** `bubblewrap` when active. */
  mechanism: 'bubblewrap' | 'none';
  /** Why it is not active (unavailable, or mode `off`). */
  reason?: string;
  network: SandboxNetwork;
  writableRoots: readonly string[];
}

/** A command to start, before or after wrapping. */
export interface SandboxCommand {
  file: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** An OS sandbox for the processes a tool starts. */
export interface Sandbox {
  readonly status: SandboxStatus;
  /** One line for tool descriptions and banners: `sandboxed (bubblewrap): …` or `NOT sandboxed: …`. */
  describe(): string;
  /** The command to spawn instead of `command` (unchanged when the sandbox is not active). */
  wrap(command: SandboxCommand): Promise<SandboxCommand>;
  /** A note for a failed command whose output shows the sandbox blocked it, else undefined. */
  explainFailure(output: string): string | undefined;
  /** Stops the network proxy, if one runs. */
  close(): Promise<void>;
}

const brand = Symbol.for('agent.error.SandboxUnavailableError');

/** The sandbox is `required` but cannot run here. */
export class SandboxUnavailableError extends Error {
  readonly [brand] = true;
  constructor(message: string) {
    super(message);
    this.name = 'SandboxUnavailableError';
  }

  /** Works across duplicated installs. */
  static isInstance(value: unknown): value is SandboxUnavailableError {
    return value !== null && typeof value === 'object' && brand in value;
  }
}

/** Credentials and keys of the current user that sandboxed processes must not read. */
export function defaultSecretPaths(home = os.homedir()): string[] {
  return [
    '.ssh',
    '.aws',
    '.azure',
    '.config/gcloud',
    '.config/gh',
    '.kube',
    '.gnupg',
    '.docker/config.json',
    '.netrc',
    '.git-credentials',
    '.npmrc',
    '.pypirc',
    '.cargo/credentials.toml',
    '.terraform.d/credentials.tfrc.json',
  ].map((entry) => path.join(home, entry));
}

const probes = new Map<string, string | undefined>();

/**
 * Whether bubblewrap can actually run here (it may be installed yet refused by the kernel):
 * runs `bwrap … true` once per binary and caches the answer. Undefined when it works, else why not.
 */
export function bubblewrapProblem(bwrapPath = 'bwrap'): string | undefined {
  if (probes.has(bwrapPath)) return probes.get(bwrapPath);
  let problem: string | undefined;
  if (process.platform !== 'linux') {
    problem = `no OS sandbox on ${process.platform} yet (bubblewrap is Linux-only)`;
  } else {
    const probe = spawnSync(
      bwrapPath,
      ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-all', '--die-with-parent', 'true'],
      { timeout: 10_000, encoding: 'utf8' },
    );
    if (probe.error !== undefined) {
      problem =
        (probe.error as NodeJS.ErrnoException).code === 'ENOENT'
          ? `bubblewrap is not installed (${bwrapPath} not found; apt-get install bubblewrap)`
          : `bubblewrap could not start: ${probe.error.message}`;
    } else if (probe.status !== 0) {
      problem = `bubblewrap cannot create namespaces here: ${(probe.stderr ?? '').trim() || `exit ${probe.status}`}`;
    }
  }
  probes.set(bwrapPath, problem);
  return problem;
}

/** Port the allow-list proxy listens on inside the sandbox (its own network namespace). */
const proxyPort = 3128;

/**
 * Creates a sandbox. With `required` and no working bubblewrap it throws
 * {@link SandboxUnavailableError}; with `auto` it reports the fallback through `onWarning` once.
 */
export function createSandbox(options: SandboxOptions): Sandbox {
  const mode = options.mode ?? 'auto';
  if (!['auto', 'required', 'off'].includes(mode)) {
    throw new TypeError(`sandbox mode must be auto, required or off, got ${String(mode)}`);
  }
  const network = options.network ?? 'off';
  const writableRoots = options.writableRoots.map((root) => realPathOf(root));
  const readableRoots = (options.readableRoots ?? []).map((root) => realPathOf(root));
  const problem = mode === 'off' ? 'the sandbox is off' : bubblewrapProblem(options.bwrapPath);
  if (mode === 'required' && problem !== undefined) {
    throw new SandboxUnavailableError(`The sandbox is required but cannot run: ${problem}`);
  }
  const status: SandboxStatus = {
    active: problem === undefined,
    mode,
    mechanism: problem === undefined ? 'bubblewrap' : 'none',
    network,
    writableRoots,
    ...(problem === undefined ? {} : { reason: problem }),
  };
  if (mode === 'auto' && problem !== undefined) {
    const warn =
      options.onWarning ??
      ((message: string) => process.emitWarning(message, { code: 'AGENT_SANDBOX_UNAVAILABLE' }));
    warn(`Commands run WITHOUT an OS sandbox: ${problem}`);
  }
  // Which exist is looked at per command: a credential (or a per-user directory) made after the
  // sandbox was created is hidden too.
  const configuredSecrets = options.secretPaths ?? defaultSecretPaths();
  const existingSecrets = () => configuredSecrets.filter((entry) => fs.existsSync(entry));
  let proxy: Promise<AllowListProxy> | undefined;

  return {
    status,
    describe() {
      if (!status.active) return `NOT sandboxed (${status.reason ?? 'unavailable'})`;
      const net =
        network === 'off'
          ? 'no network'
          : network === 'on'
            ? 'network on'
            : `network only to ${network.allowHosts.join(', ')}`;
      return `sandboxed (bubblewrap): writes only in ${writableRoots.join(', ')} and a private /tmp; ${net}`;
    },
    async wrap(command) {
      if (!status.active) return command;
      const env: NodeJS.ProcessEnv = { ...command.env, TMPDIR: '/tmp' };
      const args = [
        '--ro-bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        // A private, empty /tmp and /dev/shm per command: nothing written there outlives it, and
        // other programs' files and unix sockets there (ssh-agent, tmux, X11) are out of reach.
        '--tmpfs',
        '/tmp',
        '--tmpfs',
        '/dev/shm',
        // /run holds the host's service sockets (docker, dbus, systemd, user agents): hidden.
        '--tmpfs',
        '/run',
      ];
      // A readable root inside a hidden path (one session's directory inside a per-user one) is
      // bound after the hiding, so it alone shows through.
      const secretPaths = existingSecrets();
      const insideSecret = (root: string) =>
        secretPaths.some((secret) => secret !== root && isInside(secret, root));
      const bindReadable = (root: string) => {
        if (fs.existsSync(root)) args.push('--ro-bind', root, root);
      };
      for (const root of readableRoots) if (!insideSecret(root)) bindReadable(root);
      for (const root of writableRoots) args.push('--bind', root, root);
      for (const secret of secretPaths) {
        // Hidden inside a writable root too (a workspace holding the temporary directory or the
        // home); one that holds a writable root is where the user chose to work: left visible.
        if (writableRoots.some((root) => isInside(secret, root))) continue;
        const stat = fs.statSync(secret, { throwIfNoEntry: false });
        if (stat === undefined) continue; // vanished since it was seen: nothing to read
        if (stat.isDirectory()) args.push('--tmpfs', secret);
        else args.push('--ro-bind', '/dev/null', secret);
      }
      for (const root of readableRoots) if (insideSecret(root)) bindReadable(root);
      args.push('--unshare-all', '--die-with-parent', '--new-session');
      let inner = [command.file, ...command.args];
      if (network === 'on') args.push('--share-net');
      else if (network !== 'off') {
        proxy ??= startAllowListProxy(network.allowHosts);
        const { socketPath } = await proxy;
        const inside = '/tmp/.agent-sandbox-proxy.sock';
        args.push('--ro-bind', socketPath, inside);
        const url = `http://127.0.0.1:${proxyPort}`;
        for (const name of [
          'HTTP_PROXY',
          'HTTPS_PROXY',
          'http_proxy',
          'https_proxy',
          'ALL_PROXY',
        ]) {
          env[name] = url;
        }
        env.NO_PROXY = '';
        env.no_proxy = '';
        // Inside its own network namespace the command reaches only loopback; socat carries
        // loopback:3128 to the proxy outside, which lets through only the allowed hosts.
        inner = [
          '/bin/sh',
          '-c',
          `socat TCP-LISTEN:${proxyPort},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${inside} 2>/dev/null & ` +
            `i=0; until [ $i -ge 300 ] || socat -u OPEN:/dev/null TCP:127.0.0.1:${proxyPort} 2>/dev/null; do i=$((i+1)); sleep 0.01; done; exec "$@"`,
          'sandbox',
          ...inner,
        ];
      }
      args.push('--chdir', command.cwd, '--', ...inner);
      return { file: options.bwrapPath ?? 'bwrap', args, cwd: command.cwd, env };
    },
    explainFailure(output) {
      if (!status.active) return undefined;
      if (/Read-only file system|EROFS/.test(output)) {
        return `Blocked by the sandbox: writes outside ${writableRoots.join(', ')} and /tmp are not allowed. Running outside the sandbox is a separate permission (dangerouslyDisableSandbox).`;
      }
      if (
        network !== 'on' &&
        /Could not resolve host|Temporary failure in name resolution|Network is unreachable|getaddrinfo|ENETUNREACH|EAI_AGAIN|Name or service not known|403 Forbidden.*proxy|blocked by the sandbox proxy/i.test(
          output,
        )
      ) {
        return network === 'off'
          ? 'Blocked by the sandbox: the network is off for commands.'
          : `Blocked by the sandbox: only ${network.allowHosts.join(', ')} can be reached.`;
      }
      const secretPaths = existingSecrets();
      if (
        secretPaths.length > 0 &&
        secretPaths.some(
          (secret) => output.includes(secret) || output.includes(path.basename(secret)),
        )
      ) {
        return 'Blocked by the sandbox: credential paths are hidden from commands.';
      }
      return undefined;
    },
    async close() {
      if (proxy !== undefined) await (await proxy).close();
    },
  };
}

function realPathOf(entry: string): string {
  try {
    return fs.realpathSync(entry);
  } catch {
    return path.resolve(entry);
  }
}

function isInside(root: string, entry: string): boolean {
  const relative = path.relative(root, entry);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
