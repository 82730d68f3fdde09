import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeForAnyUser } from '@agent/tooling-system-tools';
import { cleanEnv, runCli, writeScript } from './test-support.js';

/** What {@link probeSession} saw. */
export interface ProbeResult {
  /** What the sandboxed commands printed, as they saw it (`seen.txt` in the workspace). */
  seen: string;
  /** The saved conversation: the file tools' results as the model read them. */
  conversation: string;
}

/**
 * Runs a scripted full-access session, sandbox required, as `uid` (everything in `dir` is made
 * theirs), in `workspace` with `home` as HOME: one turn whose bash runs each of `commands`
 * (appending to `seen.txt`) and whose other `calls` run beside it. Throws when the CLI fails.
 */
export async function probeSession(options: {
  uid: number | undefined;
  dir: string;
  workspace: string;
  home: string;
  commands: readonly string[];
  calls: readonly { id: string; name: string; arguments: Record<string, unknown> }[];
  env?: Record<string, string>;
}): Promise<ProbeResult> {
  const { dir, uid } = options;
  const probe = options.commands.map((command) => `${command} >> seen.txt 2>&1`).join('; ');
  const script = await writeScript(dir, [
    { toolCalls: [{ name: 'bash', arguments: { command: probe } }, ...options.calls] },
    { text: 'done' },
  ]);
  const saved = join(dir, 'saved.json');
  const node = join(dir, 'node');
  nodeForAnyUser(node);
  if (uid !== undefined) spawnSync('chown', ['-R', `${uid}:${uid}`, dir]);
  const run = await runCli(
    [
      ...['-p', 'look around', '--scripted', script, '--cwd', options.workspace],
      ...['--mode', 'full-access', '--sandbox', 'required', '--save', saved],
    ],
    {
      node,
      uid,
      env: cleanEnv({
        HOME: options.home,
        AGENT_HOME: join(dir, 'state'),
        TMPDIR: dir,
        ...options.env,
      }),
    },
  );
  if (run.code !== 0) throw new Error(`the CLI exited with ${run.code}: ${run.stderr}`);
  return {
    seen: readFileSync(join(options.workspace, 'seen.txt'), 'utf8'),
    conversation: readFileSync(saved, 'utf8'),
  };
}
