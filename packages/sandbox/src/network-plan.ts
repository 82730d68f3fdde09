// How the commands of a sandbox reach the network and Unix sockets, decided once per sandbox.
import { type Bubblewrap, nestingProblem } from './bubblewrap-command.js';
import type { SandboxStatus } from './sandbox-interface.js';
import type { SandboxNetwork } from './sandbox-options.js';
import { trustedProgram } from './trusted-program.js';

/** What {@link planNetwork} decided. */
export interface NetworkPlan {
  /** Whether the allow-listed network runs in two nested bwraps (socat in the outer one). */
  nested: boolean;
  /** The socat the outer stage relays with; undefined when not nested, or none was found. */
  socatPath: string | undefined;
  /** Whether the commands' filter lets them create Unix-domain sockets. */
  unixSocketsAllowed: boolean;
  /** What `status.unixSockets` says. */
  unixSockets: SandboxStatus['unixSockets'];
  /** What this leaves unenforced here, for `status.limitations` [none]. */
  limitations: string[];
}

/** How `network` and `allowUnixSockets` are put in force with this bubblewrap. */
export function planNetwork(options: {
  bubblewrap: Bubblewrap | undefined;
  network: SandboxNetwork;
  allowUnixSockets: readonly string[];
  writableRoots: readonly string[];
}): NetworkPlan {
  const { bubblewrap, network, allowUnixSockets } = options;
  const limitations: string[] = [];
  // The allow-listed network nests two bwraps so socat (which needs a Unix socket) stays out of
  // the filter's reach; where the kernel refuses that, socat and the command share one filter.
  let nested = false;
  if (bubblewrap !== undefined && typeof network === 'object' && bubblewrap.features.seccomp) {
    const nesting = nestingProblem(bubblewrap);
    nested = nesting === undefined;
    if (!nested && allowUnixSockets.length === 0) {
      limitations.push(
        `with allowHosts, Unix sockets are not blocked: bubblewrap cannot nest here (${nesting}), and socat needs one to reach the proxy`,
      );
    }
  }
  // socat runs in the outer stage, which sees every secret: found once, where no command can
  // put one of its own (as bubblewrap is). Not found: the relay fails and nothing is reachable.
  const socatFound =
    nested && typeof network === 'object'
      ? trustedProgram('socat', {
          searchPath: process.env.PATH,
          untrustedRoots: options.writableRoots,
        })
      : undefined;
  const socatPath = socatFound !== undefined && 'path' in socatFound ? socatFound.path : undefined;
  if (socatFound !== undefined && 'problem' in socatFound) {
    limitations.push(
      `with allowHosts, nothing can be reached: no socat to relay to the proxy (${socatFound.problem})`,
    );
  }
  const unixSocketsAllowed =
    allowUnixSockets.length > 0 || (typeof network === 'object' && !nested);
  const unixSockets: SandboxStatus['unixSockets'] =
    bubblewrap?.features.seccomp === undefined
      ? 'open'
      : unixSocketsAllowed
        ? 'allowed'
        : 'blocked';
  return { nested, socatPath, unixSocketsAllowed, unixSockets, limitations };
}
