import { join } from 'node:path';
import { createSandbox, defaultSecretPaths, type Sandbox } from '@agent/sandbox';
import { agentHome } from '../config/agent-home.js';
import type { CliOptions } from '../config/args.js';

/**
 * Whether the session's command hooks run in the OS sandbox: by default in a folder the user has
 * not trusted — the user's own hooks are innocent, but a formatter loads the repository's config
 * as code and `git status` runs its `core.fsmonitor`; `hooksSandbox` in the user settings says
 * `always` or `off`.
 */
export function hooksRunSandboxed(
  options: Pick<CliOptions, 'hooksSandbox' | 'workspaceTrusted'>,
): boolean {
  const setting = options.hooksSandbox ?? 'untrusted-folders';
  switch (setting) {
    case 'always':
      return true;
    case 'off':
      return false;
    case 'untrusted-folders':
      return options.workspaceTrusted === false;
    default: {
      const exhaustive: never = setting;
      return exhaustive;
    }
  }
}

/**
 * The sandbox hooks run in: bash's containment (writes only in the workspace and a private /tmp,
 * the workspace's `.git` read-only, credential stores and `$AGENT_HOME` hidden) with the network
 * on unless `hooksSandboxNetwork` says off, so formatters, linters and notifiers that fetch or
 * post keep working. The project root is readable (a hook runs there), and so are
 * `$AGENT_HOME/hooks` (where hook scripts are kept) and `$AGENT_HOME/skills`. Mode `auto` whatever
 * bash's is: where it cannot run, `CommandHooks` withholds the sandboxed hooks instead of running
 * them outside.
 */
export function createHooksSandbox(options: {
  cwd: string;
  projectRoot: string;
  /** `hooksSandboxNetwork` of the user settings [on]. */
  network?: 'on' | 'off';
}): Sandbox {
  const home = agentHome();
  return createSandbox({
    mode: 'auto',
    writableRoots: [options.cwd],
    readableRoots: [options.projectRoot, join(home, 'hooks'), join(home, 'skills')],
    secretPaths: [...defaultSecretPaths(), home],
    network: options.network ?? 'on',
    // The session says it once, naming the hooks (hooksNotice).
    onWarning: () => undefined,
  });
}
