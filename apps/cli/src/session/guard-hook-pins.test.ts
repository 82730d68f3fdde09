import { execFileSync, spawn } from 'node:child_process';
import { existsSync, watch } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
  cliPath,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

// A PreToolUse hook's `allow` lets a call run without a question — one outside the OS sandbox
// (`dangerouslyDisableSandbox`) too: that is the user's guard speaking. Such a guard runs in the
// sandbox by default, and what it runs is often a file of the project (`sh scripts/hooks/guard.sh`;
// not under `.agent/`, which is read-only in the sandbox and asks before a file tool writes there).
// Only hooks outside the sandbox were pinned to the files they run: a sandboxed bash call (or a
// file edit) rewrote the guard to answer `allow`, and the next call, asking to leave the sandbox,
// ran outside it unasked — in -p mode with no one to ask, as root here.

beforeAll(assertBuilt);
beforeEach(skipWithout('bwrap'));
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const silentGuard = 'cat > /dev/null\n';
const allowingGuard =
  'cat > /dev/null\necho \'{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}\'\n';

/** A project whose user-level PreToolUse guard runs `sh scripts/hooks/guard.sh` of the project. */
async function guarded(guard: string) {
  const dir = await tempDir('agent-cli-guard-hook-pins-');
  cleanups.push(dir.dispose);
  const repo = join(dir.path, 'repo');
  const home = join(dir.path, 'home');
  // Outside the workspace: only a process outside the sandbox can write here.
  const outside = join(dir.path, 'outside');
  await mkdir(join(repo, 'scripts', 'hooks'), { recursive: true });
  await mkdir(home);
  await mkdir(outside);
  execFileSync('git', ['init', '-q', repo]);
  const guardFile = join(repo, 'scripts', 'hooks', 'guard.sh');
  await writeFile(guardFile, guard);
  await writeFile(
    join(home, 'settings.json'),
    JSON.stringify({
      hooks: {
        PreToolUse: [
          { matcher: 'bash', hooks: [{ type: 'command', command: 'sh scripts/hooks/guard.sh' }] },
        ],
      },
    }),
  );
  /** One session (`-p`, workspace-write) replaying `steps`; whether a call left the sandbox so far. */
  const session = async (steps: unknown[]) => {
    const script = await writeScript(dir.path, steps);
    const run = await runCli(
      ['--scripted', script, '--cwd', repo, '-p', 'go', '--mode', 'workspace-write'],
      { env: cleanEnv({ AGENT_HOME: home }), cwd: dir.path },
    );
    return { run, escaped: existsSync(join(outside, 'escaped')) };
  };
  /**
   * One session (`-p`) replaying `steps`, ended by `signal` once the file `marker` appears in the
   * project (a closed terminal: SIGHUP).
   */
  const signalled = async (steps: unknown[], marker: string, signal: NodeJS.Signals) => {
    const script = await writeScript(dir.path, steps);
    const child = spawn(
      process.execPath,
      [cliPath, '--scripted', script, '--cwd', repo, '-p', 'go', '--mode', 'workspace-write'],
      { env: cleanEnv({ AGENT_HOME: home }), cwd: dir.path, stdio: 'ignore' },
    );
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const watcher = watch(join(repo, 'scripts'));
    await new Promise<void>((resolve) => {
      const look = () => {
        if (existsSync(join(repo, marker))) resolve();
      };
      watcher.on('change', look);
      look();
    });
    watcher.close();
    child.kill(signal);
    await closed;
  };
  return { session, signalled, outside, guardFile };
}

/** A sandboxed bash call that rewrites the guard to answer `allow`. */
const rewriteToAllow = {
  name: 'bash',
  arguments: {
    command: `echo ${Buffer.from(allowingGuard).toString('base64')} | base64 -d > scripts/hooks/guard.sh`,
  },
};

async function runWithGuard(guard: string, steps: (outside: string) => unknown[]) {
  const { session, outside } = await guarded(guard);
  return session(steps(outside));
}

const leave = (outside: string) => ({
  toolCalls: [
    {
      name: 'bash',
      arguments: { command: `touch ${join(outside, 'escaped')}`, dangerouslyDisableSandbox: true },
    },
  ],
});

describe('a sandboxed PreToolUse guard whose script a call rewrote', () => {
  it.each([
    ['by a sandboxed bash command', rewriteToAllow],
    [
      'by write_file',
      { name: 'write_file', arguments: { path: 'scripts/hooks/guard.sh', content: allowingGuard } },
    ],
  ])('%s: its allow does not let a call leave the sandbox unasked', async (_how, rewrite) => {
    const { run, escaped } = await runWithGuard(silentGuard, (outside) => [
      { toolCalls: [rewrite] },
      leave(outside),
      { text: 'done' },
    ]);
    expect(escaped).toBe(false);
    expect(run.stderr).toContain(
      'PreToolUse hook "sh scripts/hooks/guard.sh" did not run: the project files it runs changed during this session (scripts/hooks/guard.sh)',
    );
  });

  it('the control: the same guard, unchanged since the start, is the user speaking', async () => {
    const { run, escaped } = await runWithGuard(allowingGuard, (outside) => [
      leave(outside),
      { text: 'done' },
    ]);
    expect(run.code).toBe(0);
    expect(escaped).toBe(true);
    expect(run.stderr).not.toContain('did not run');
  });

  it('a rewrite in one session: the next session does not run the guard either, until the file changes again', async () => {
    const { session, outside, guardFile } = await guarded(silentGuard);
    // The session ends right after the rewrite: no later call ran the guard in it.
    await session([{ toolCalls: [rewriteToAllow] }, { text: 'done' }]);
    const next = await session([leave(outside), { text: 'done' }]);
    expect(next.escaped).toBe(false);
    expect(next.run.stderr).toContain(
      'PreToolUse hook "sh scripts/hooks/guard.sh" did not run: the project files it runs are as an earlier session left them, changed during it (scripts/hooks/guard.sh)',
    );
    // The user looked and wrote the guard they want: it speaks for them again.
    await writeFile(guardFile, `# reviewed\n${allowingGuard}`);
    const reviewed = await session([leave(outside), { text: 'done' }]);
    expect(reviewed.run.stderr).not.toContain('did not run');
    expect(reviewed.escaped).toBe(true);
  });

  it('a rewrite in a session killed outright (SIGKILL): the next session does not run the guard either', async () => {
    const { signalled, session, outside } = await guarded(silentGuard);
    // Nothing of the CLI runs at SIGKILL (nor at an OOM kill): what the rewrite's batch changed
    // must be on disk before the next batch starts. The later calls do not run the guard.
    const marker = { name: 'write_file', arguments: { path: 'scripts/rewritten', content: '' } };
    const wait = { name: 'sleep', arguments: { seconds: 300 } };
    await signalled(
      [
        { toolCalls: [rewriteToAllow] },
        { toolCalls: [marker] },
        { toolCalls: [wait] },
        { text: 'done' },
      ],
      'scripts/rewritten',
      'SIGKILL',
    );
    const next = await session([leave(outside), { text: 'done' }]);
    expect(next.escaped).toBe(false);
    expect(next.run.stderr).toContain(
      'PreToolUse hook "sh scripts/hooks/guard.sh" did not run: the project files it runs are as an earlier session left them, changed during it (scripts/hooks/guard.sh)',
    );
  });

  it('a rewrite in a session ended by a closed terminal (SIGHUP): the next session does not run the guard either', async () => {
    const { signalled, session, outside } = await guarded(silentGuard);
    // The rewrite is the session's last call (no later call ran the guard in it), and the
    // session ends by a signal while the command still runs — the terminal closed.
    const rewrite = {
      name: 'bash',
      arguments: {
        command: `echo ${Buffer.from(allowingGuard).toString('base64')} | base64 -d > scripts/hooks/guard.sh && touch scripts/rewritten && sleep 600`,
      },
    };
    await signalled([{ toolCalls: [rewrite] }, { text: 'done' }], 'scripts/rewritten', 'SIGHUP');
    const next = await session([leave(outside), { text: 'done' }]);
    expect(next.escaped).toBe(false);
    expect(next.run.stderr).toContain(
      'PreToolUse hook "sh scripts/hooks/guard.sh" did not run: the project files it runs are as an earlier session left them, changed during it (scripts/hooks/guard.sh)',
    );
  });
});
