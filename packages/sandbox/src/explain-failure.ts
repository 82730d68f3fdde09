import * as os from 'node:os';
import * as path from 'node:path';
import { isInside } from './real-paths.js';
import { formatBytes } from './resource-limits.js';
import type { SandboxNetwork } from './sandbox-options.js';

/** What {@link explainFailure} needs to know about the sandbox. */
export interface FailureContext {
  writableRoots: readonly string[];
  /** The sandbox is a read-only view (`Sandbox.readOnlyView`): the roots are read-only too [false]. */
  readOnly?: boolean;
  network: SandboxNetwork;
  hiddenPaths: readonly string[];
  unixSockets: 'blocked' | 'allowed' | 'open';
  /** The home's startup files kept read-only inside a writable root [none]. */
  startupFiles?: readonly string[];
  /** The editors' and tools' auto-run files kept read-only (see auto-run-files.ts) [none]. */
  autoRunFiles?: readonly string[];
  /** The process limit in force, when one is [none]. */
  maxProcesses?: number;
  /** The file size limit in force, in bytes, when one is [none]. */
  maxFileBytes?: number;
  /** Each process's private memory limit (RLIMIT_DATA), in bytes, when one is [none]. */
  maxProcessDataBytes?: number;
}

// `A(?:(?!A).)*?B` finds what `A.*B` finds, but each try stops at the next `A`: `A.*B` rescanned
// the rest of the line from every `A` of output that repeats it (quadratic in the output).
const networkFailure =
  /Could not resolve host|Temporary failure in name resolution|Network is unreachable|getaddrinfo|ENETUNREACH|EAI_AGAIN|Name or service not known|403 Forbidden(?:(?!403 Forbidden).)*?proxy|blocked by the sandbox proxy|unrecognized.name/i;

// socat: `socket(1, 1, 0): Operation not permitted`; Node: `connect EPERM /x.sock`; Go (docker):
// `dial unix /x.sock: socket: operation not permitted`; Python: `[Errno 1] … ` next to a socket path.
const unixSocketFailure =
  /socket\(1, ?\d+, ?\d+\): Operation not permitted|socket: operation not permitted|(connect|listen|bind) EPERM|AF_UNIX(?:(?!AF_UNIX).)*?(not permitted|EPERM)|Operation not permitted(?:(?!Operation not permitted).)*?\.sock\b|\.sock\b(?:(?!\.sock\b).)*?Operation not permitted/i;

// bash: `fork: retry: Resource temporarily unavailable`; Node: `spawn EAGAIN`; Python:
// `BlockingIOError: [Errno 11]`; threads: `pthread_create … Resource temporarily unavailable`.
const processLimitFailure =
  /fork: (retry: )?Resource temporarily unavailable|Cannot fork|spawn(Sync)? \S* ?EAGAIN|\[Errno 11\] Resource temporarily unavailable|(pthread_create|can't start new thread|unable to create native thread|unable to create new native thread)/i;

/** A note for a failed command whose output shows the sandbox blocked it, else undefined. */
export function explainFailure(output: string, context: FailureContext): string | undefined {
  const { writableRoots, network } = context;
  const home = os.homedir();
  // A write refused by a read-only mount inside a writable root: EROFS, or EBUSY for a rename
  // or removal of the mount point itself (git renames its lock file over the config).
  const refused = /Read-only file system|EROFS|Device or resource busy|EBUSY/;
  if (context.readOnly === true && refused.test(output))
    return `Blocked by the sandbox: this command was allowed only to read (the session's permission mode lets nothing write unasked), so it ran with ${writableRoots.join(', ')} read-only; only /tmp is writable. A command that writes must be one the permission check sees writing: it is then asked for (or, in plan mode, refused).`;
  const startupFile = (context.startupFiles ?? []).find((file) =>
    output.split('\n').some((line) => refused.test(line) && mentions(line, file, home)),
  );
  if (startupFile !== undefined) {
    return `Blocked by the sandbox: the home's startup files (${startupFile}, .bashrc, .profile, .gitconfig, …) are read-only inside it, even in a writable root (what is written there runs with the user's next shell, git or login). Change them outside the sandbox (dangerouslyDisableSandbox: asked).`;
  }
  const autoRunFile = (context.autoRunFiles ?? []).find((file) =>
    output
      .split('\n')
      .some(
        (line) =>
          refused.test(line) && (line.includes(file) || namedAtStart(line, path.basename(file))),
      ),
  );
  if (autoRunFile !== undefined) {
    return `Blocked by the sandbox: ${autoRunFile} is read-only inside it, as are the other files editors and tools run later without asking (.vscode, .idea, .devcontainer, .claude, git hooks…). Change it outside the sandbox (write_file asks; dangerouslyDisableSandbox: asked), or the user can lift this in their settings.`;
  }
  if (output.split('\n').some((line) => refused.test(line) && /\.git(\/|\b|$)/.test(line)))
    return "Blocked by the sandbox: a repository's .git is read-only inside it (what is written there runs later with the user's git). Commit, branch or configure git outside the sandbox (dangerouslyDisableSandbox: asked).";
  if (/Read-only file system|EROFS/.test(output)) {
    return `Blocked by the sandbox: writes outside ${writableRoots.join(', ')} and /tmp are not allowed. Running outside the sandbox is a separate permission (dangerouslyDisableSandbox).`;
  }
  if (network !== 'on' && networkFailure.test(output)) {
    return network === 'off'
      ? 'Blocked by the sandbox: the network is off for commands.'
      : `Blocked by the sandbox: only ${network.allowHosts.join(', ')} can be reached.`;
  }
  if (context.unixSockets === 'blocked' && unixSocketFailure.test(output)) {
    return 'Blocked by the sandbox: commands cannot open Unix-domain sockets (the allowUnixSockets option lists the ones they may use).';
  }
  if (context.maxProcesses !== undefined && processLimitFailure.test(output)) {
    return `Blocked by the sandbox: commands may run at most ${context.maxProcesses} processes and threads at once (all of them together).`;
  }
  // bash: `File size limit exceeded`; EFBIG: `File too large` (Python, Node, dd after SIGXFSZ is ignored).
  if (
    context.maxFileBytes !== undefined &&
    /File size limit exceeded|File too large|EFBIG/.test(output)
  ) {
    return `Blocked by the sandbox: a file may grow to at most ${formatBytes(context.maxFileBytes)} inside it (maxFileBytes), so one runaway file cannot fill the disk or memory.`;
  }
  // util-linux fallocate: `keep size mode is unsupported` (EOPNOTSUPP from the seccomp filter).
  if (/keep size mode is unsupported/.test(output)) {
    return 'Blocked by the sandbox: fallocate --keep-size (blocks past the end of a file, which the file size limit does not see) is refused inside it; allocate by growing the file (fallocate without --keep-size) instead.';
  }
  // Python: `MemoryError`; Node: `Fatal process out of memory`, `Array buffer allocation failed`; C: ENOMEM
  // (`Cannot allocate memory`, `std::bad_alloc`); Go: `runtime: out of memory`.
  if (
    context.maxProcessDataBytes !== undefined &&
    /MemoryError|out of memory|Cannot allocate memory|ENOMEM|bad_alloc|memory exhausted|allocation failed/i.test(
      output,
    )
  ) {
    return `Blocked by the sandbox: each process may use at most ${formatBytes(context.maxProcessDataBytes)} of memory of its own inside it (RLIMIT_DATA; no memory cgroup can be made here). Use less at once (smaller inputs, streaming), or raise maxMemoryBytes.`;
  }
  if (/Bad system call/.test(output)) {
    return 'Blocked by the sandbox: a system call of another architecture (a 32-bit program, or int 0x80) ended the process.';
  }
  if (
    context.hiddenPaths.some((secret) => {
      if (output.includes(secret)) return true;
      // `~/..cache/key` is inside the home: compared by segments, not by a leading `..`.
      return (
        secret !== home &&
        isInside(home, secret) &&
        output.includes(`~/${path.relative(home, secret)}`)
      );
    })
  ) {
    return 'Blocked by the sandbox: credential paths are hidden from commands.';
  }
  return undefined;
}

/** Whether `line` names `file`: absolutely, as `~/…`, or relative to the home (run from there). */
/** Whether `line` names `name` as a path of its own or its first segment (`.vscode/tasks.json: …`). */
function namedAtStart(line: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[\\s'"‘\`/])${escaped}([/\\s'"’:]|$)`).test(line);
}

function mentions(line: string, file: string, home: string): boolean {
  if (line.includes(file)) return true;
  if (file === home || !isInside(home, file)) return false;
  const relative = path.relative(home, file);
  const escaped = relative.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[\\s'"‘\`])(~/)?${escaped}([/\\s'"’:]|$)`).test(line);
}
