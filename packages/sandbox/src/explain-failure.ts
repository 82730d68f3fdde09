import * as os from 'node:os';
import * as path from 'node:path';
import type { SandboxNetwork } from './sandbox.js';

/** What {@link explainFailure} needs to know about the sandbox. */
export interface FailureContext {
  writableRoots: readonly string[];
  network: SandboxNetwork;
  hiddenPaths: readonly string[];
  unixSockets: 'blocked' | 'allowed' | 'open';
}

const networkFailure =
  /Could not resolve host|Temporary failure in name resolution|Network is unreachable|getaddrinfo|ENETUNREACH|EAI_AGAIN|Name or service not known|403 Forbidden.*proxy|blocked by the sandbox proxy/i;

// socat: `socket(1, 1, 0): Operation not permitted`; Node: `connect EPERM /x.sock`; Go (docker):
// `dial unix /x.sock: socket: operation not permitted`; Python: `[Errno 1] … ` next to a socket path.
const unixSocketFailure =
  /socket\(1, ?\d+, ?\d+\): Operation not permitted|socket: operation not permitted|(connect|listen|bind) EPERM|AF_UNIX.*(not permitted|EPERM)|Operation not permitted.*\.sock\b|\.sock\b.*Operation not permitted/i;

/** A note for a failed command whose output shows the sandbox blocked it, else undefined. */
export function explainFailure(output: string, context: FailureContext): string | undefined {
  const { writableRoots, network } = context;
  if (
    /\.git\/[^\n]*(Read-only file system|EROFS)|(Read-only file system|EROFS)[^\n]*\.git\//.test(
      output,
    )
  )
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
  if (/Bad system call/.test(output)) {
    return 'Blocked by the sandbox: a system call of another architecture (a 32-bit program, or int 0x80) ended the process.';
  }
  const home = os.homedir();
  if (
    context.hiddenPaths.some((secret) => {
      if (output.includes(secret)) return true;
      const relative = path.relative(home, secret);
      return !relative.startsWith('..') && output.includes(`~/${relative}`);
    })
  ) {
    return 'Blocked by the sandbox: credential paths are hidden from commands.';
  }
  return undefined;
}
