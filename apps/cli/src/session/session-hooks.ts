import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { CommandHooks, type HooksConfig } from '@agent/command-hooks';
import { createSandbox, defaultSecretPaths, type Sandbox } from '@agent/sandbox';
import { agentHome } from '../config/agent-home.js';
import type { CliOptions } from '../config/args.js';
import { commandSecrets } from '../config/command-secrets.js';
import { credentialFilePaths } from '../config/credential-files.js';
import { redactAlso } from '../ui/redaction.js';
import { hookFilePins, repositoryWatch } from './hook-file-pins.js';
import { HookPinRecord } from './hook-pin-record.js';

/** A session's command hooks and, when they run in one, their OS sandbox. */
export interface SessionHooks {
  /** Undefined when no settings file configures a hook. */
  commandHooks: CommandHooks | undefined;
  /** The hooks' sandbox (close it with the session), when they run in one. */
  sandbox: Sandbox | undefined;
  /** For the banner and stream-json: what the hooks' sandbox allows, when it is in force. */
  description: string | undefined;
  /**
   * After each tool call: remembers the hooks whose project files changed so far
   * (hook-pin-record.ts) — a session killed outright (SIGKILL, OOM) runs nothing at its end.
   * Cheap: it reads a hook's files only when their stats changed.
   */
  recordChangesSoFar(): void;
  /** At the session's end: remembers the hooks whose project files changed during it. */
  recordChanges(): void;
}

/**
 * The command hooks of the settings files, in the project root (a hook's relative paths work from
 * any subfolder), without the environment's credentials but `passEnv`'s; in the OS sandbox where
 * {@link hooksRunSandboxed} says so. Hooks the sandbox would hold but cannot run here are
 * withheld: `log` is told once, now, with the ways to run them.
 */
export function createSessionHooks(
  options: Pick<
    CliOptions,
    'cwd' | 'hooks' | 'hooksSandbox' | 'hooksSandboxNetwork' | 'passEnv' | 'workspaceTrusted'
  >,
  session: { id: string; projectRoot: string; log: (line: string) => void },
): SessionHooks {
  const config = options.hooks ?? {};
  if (Object.keys(config).length === 0) {
    // No hook now, but one added later must not take a `.git` made during this session for the user's.
    const watch = repositoryWatch(
      session.projectRoot,
      new HookPinRecord(agentHome(), session.projectRoot),
    );
    process.once('exit', watch);
    return {
      commandHooks: undefined,
      sandbox: undefined,
      description: undefined,
      recordChangesSoFar: watch,
      recordChanges: () => {
        process.off('exit', watch);
        watch();
      },
    };
  }
  // A token or webhook URL written into a hook's command: a failed hook's notice quotes it.
  redactAlso(hookCommandSecrets(config));
  const sandbox = hooksRunSandboxed(options)
    ? createHooksSandbox({
        cwd: resolve(options.cwd),
        projectRoot: session.projectRoot,
        passEnv: options.passEnv ?? [],
        ...(options.hooksSandboxNetwork === undefined
          ? {}
          : { network: options.hooksSandboxNetwork }),
      })
    : undefined;
  // What a hook outside the sandbox runs of the project, and what a PreToolUse guard runs, must be
  // what it was at the start — and not as an earlier session changed it.
  const pins = hookFilePins(
    config,
    session.projectRoot,
    new HookPinRecord(agentHome(), session.projectRoot),
  );
  // A session may end without its close: a closed terminal (SIGHUP), SIGTERM at the REPL's
  // prompt, a second Ctrl-C, a crash — process.exit, with only exit handlers left to run. What it
  // found changed is kept then too (synchronously), or the next session would pin it as the user's.
  const recordAtExit = () => pins.recordChanges();
  process.once('exit', recordAtExit);
  const commandHooks = new CommandHooks(config, {
    cwd: session.projectRoot,
    sessionId: session.id,
    passEnv: options.passEnv ?? [],
    onWarning: (line) => session.log(`hook: ${line}`),
    ...(sandbox === undefined ? {} : { sandbox }),
    refuseOutside: pins.refuse,
    // In a folder not trusted, a hook outside the sandbox (a notifier marked "sandbox": false)
    // starts in the home: `npx -y notifier` in the folder ran its planted node_modules/.bin.
    ...(sandbox !== undefined && options.workspaceTrusted === false
      ? { outsideCwd: homedir() }
      : {}),
    // A hook that posts or fetches fails there for want of a network: say how to give it one.
    ...(options.hooksSandboxNetwork === 'on'
      ? {}
      : {
          sandboxFailureHint: `it has no network; "sandbox": false on the hook runs it outside, "hooksSandboxNetwork": "on" in ${join(agentHome(), 'settings.json')} gives the sandbox one`,
        }),
  });
  const withheld = commandHooks.sandboxNotice();
  if (withheld !== undefined) {
    const trust = options.hooksSandbox === 'always' ? '' : 'trust this folder (agent trust), or ';
    session.log(
      `hooks: ${withheld} To run them: ${trust}mark a hook "sandbox": false or set "hooksSandbox": "off" in ${join(agentHome(), 'settings.json')}.`,
    );
  }
  const untrusted = options.workspaceTrusted === false ? ' (this folder is not trusted)' : '';
  return {
    commandHooks,
    sandbox,
    description: sandbox?.status.active === true ? `${sandbox.describe()}${untrusted}` : undefined,
    recordChangesSoFar: pins.recordChanges,
    recordChanges: () => {
      process.off('exit', recordAtExit);
      pins.recordChanges();
    },
  };
}

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
 * the workspace's `.git` read-only, credential stores and `$AGENT_HOME` hidden) and, unless
 * `hooksSandboxNetwork` says on, bash's network: none — the repository's code that a formatter or
 * `git status` runs could otherwise send what it reads (or a cloud VM's metadata credentials) to
 * its own host. The project root is readable (a hook runs there), and so are
 * `$AGENT_HOME/hooks` (where hook scripts are kept) and `$AGENT_HOME/skills`. Mode `auto` whatever
 * bash's is: where it cannot run, `CommandHooks` withholds the sandboxed hooks instead of running
 * them outside.
 */
export function createHooksSandbox(options: {
  cwd: string;
  projectRoot: string;
  /** `hooksSandboxNetwork` of the user settings [off]. */
  network?: 'on' | 'off';
  /** Variables the hooks get even when credentials: the files they name stay readable [none]. */
  passEnv?: readonly string[];
}): Sandbox {
  const home = agentHome();
  return createSandbox({
    mode: 'auto',
    writableRoots: [options.cwd],
    readableRoots: [options.projectRoot, join(home, 'hooks'), join(home, 'skills')],
    // And the files the credential variables name (credential-files.ts).
    secretPaths: [
      ...defaultSecretPaths(),
      home,
      ...credentialFilePaths(process.env, { cwd: options.cwd, pass: options.passEnv ?? [] }),
    ],
    network: options.network ?? 'off',
    // The session says it once, naming the hooks (hooksNotice).
    onWarning: () => undefined,
  });
}

/**
 * The credentials written into the hooks' commands (`curl -H "Authorization: Bearer …"`, a
 * Slack webhook URL), named `hook <event> <n>.arg …` for the redaction.
 */
export function hookCommandSecrets(config: HooksConfig): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const [event, matchers] of Object.entries(config))
    (matchers ?? []).forEach((matcher, group) => {
      matcher.hooks.forEach((hook, index) => {
        if (typeof hook.command === 'string')
          Object.assign(secrets, commandSecrets(`hook ${event} ${group}.${index}`, hook.command));
      });
    });
  return secrets;
}
