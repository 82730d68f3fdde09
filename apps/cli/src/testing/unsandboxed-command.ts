// A CLI session whose scripted model runs one unsandboxed bash command — standing in for any
// process of the user (a hook, a server, a command with the sandbox off) — in a new workspace,
// as root or as another user, with a provider key in the CLI's environment.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { anyUserDirectory, nodeForAnyUser } from '@agent/tooling-system-tools';
import { type CliRun, cleanEnv, runCli, writeScript } from './test-support.js';

/** Where {@link runUnsandboxedCommand} ran, and how the CLI ended. */
export interface UnsandboxedRun {
  run: CliRun;
  /** The folder of it all (removed by the caller's `dispose`). */
  dir: string;
  workspace: string;
  /** A node every user can run. */
  node: string;
}

/**
 * Runs the CLI as `uid` (undefined: this user) with `command` in `command.sh` of the workspace
 * (written there: the approval rules cannot read `sh -c` strings), the sandbox off, full access.
 * `launcher(node, dir)` may name a program that runs node its own way (a wrapper script).
 */
export async function runUnsandboxedCommand(options: {
  uid: number | undefined;
  prefix: string;
  command: string;
  env: Record<string, string>;
  nodeArgs?: readonly string[];
  launcher?: (node: string, dir: string) => string;
  disposeLater: (dispose: () => void) => void;
}): Promise<UnsandboxedRun> {
  const dir = anyUserDirectory(options.prefix);
  options.disposeLater(() => dir.dispose());
  const workspace = join(dir.path, 'ws');
  mkdirSync(join(dir.path, 'home'), { recursive: true });
  mkdirSync(workspace);
  const node = join(dir.path, 'node');
  nodeForAnyUser(node);
  writeFileSync(join(workspace, 'command.sh'), `${options.command}\n`);
  const script = await writeScript(dir.path, [
    { toolCalls: [{ name: 'bash', arguments: { command: 'sh command.sh' } }] },
    { text: 'done' },
  ]);
  const { uid } = options;
  if (uid !== undefined) spawnSync('chown', ['-R', `${uid}:${uid}`, dir.path]);
  const run = await runCli(
    [
      ...['-p', 'go', '--scripted', script, '--cwd', workspace],
      ...['--sandbox', 'off', '--mode', 'full-access'],
    ],
    {
      cwd: workspace,
      node: options.launcher?.(node, dir.path) ?? node,
      nodeArgs: options.nodeArgs ?? [],
      uid,
      env: cleanEnv({
        HOME: join(dir.path, 'home'),
        AGENT_HOME: join(dir.path, 'home', '.agent'),
        TMPDIR: dir.path,
        ...options.env,
      }),
    },
  );
  return { run, dir: dir.path, workspace, node };
}
