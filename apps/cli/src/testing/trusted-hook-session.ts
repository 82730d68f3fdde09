// Test support: a repository trusted by flag whose PostToolUse hook runs a project file, and one
// `-p` session in it driven by scripted model turns — for the tests of what a sandboxed command
// can make such a hook run outside the sandbox.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { messagesServer, type Turn } from './messages-server.js';
import { assertBuilt, cleanEnv, runCli, tempDir } from './test-support.js';

const providerKey = `sk-ant-api03-${'xY9_'.repeat(20)}`;

/** The hook and the project files it runs, written before the session (`OUTSIDE` substituted). */
export interface HookSetup {
  command: string;
  files: Record<string, string>;
  /** The project settings' `env` (trusted with the rest) [none]. */
  env?: Record<string, string>;
}

/**
 * Runs one session in a fresh trusted repository with `setup`'s PostToolUse hook, in
 * workspace-write mode; `outside` is a folder outside the workspace (only a process outside the
 * sandbox can write there), `ran` what the hook appended to `OUTSIDE/hook-ran`. `path`: the CLI's
 * PATH [the tests']. `uid`: the user the CLI runs as (the folders are made theirs) [this one].
 */
export async function runHookSession(options: {
  turns: (outside: string) => Turn[];
  setup: HookSetup;
  cleanups: (() => Promise<void>)[];
  path?: (repo: string) => string;
  uid?: number | undefined;
  /** Called with the repository once its files are written (a virtual environment made in it). */
  prepare?: (repo: string) => Promise<void>;
  /** More of the CLI's environment, given the test's folder (a tool's state kept there) [none]. */
  env?: (dir: string) => Record<string, string>;
}) {
  const { setup, cleanups, path, uid } = options;
  const dir = await tempDir('agent-cli-hook-session-');
  cleanups.push(dir.dispose);
  const repo = join(dir.path, 'repo');
  const home = join(dir.path, 'home');
  const outside = join(dir.path, 'outside');
  await mkdir(join(repo, '.agent'), { recursive: true });
  await mkdir(home);
  await mkdir(outside);
  execFileSync('git', ['init', '-q', repo]);
  for (const [name, content] of Object.entries(setup.files)) {
    await mkdir(dirname(join(repo, name)), { recursive: true });
    await writeFile(join(repo, name), content.replaceAll('OUTSIDE', outside), { mode: 0o755 });
  }
  await options.prepare?.(repo);
  await writeFile(
    join(repo, '.agent', 'settings.json'),
    JSON.stringify({
      hooks: { PostToolUse: [{ hooks: [{ type: 'command', command: setup.command }] }] },
      ...(setup.env === undefined ? {} : { env: setup.env }),
    }),
  );
  if (uid !== undefined) execFileSync('chown', ['-R', `${uid}:${uid}`, dir.path]);
  const server = await messagesServer(options.turns(outside), cleanups);
  const run = await runCli(
    ['-p', 'go', '--provider', 'anthropic', '--cwd', repo, '--trust', '--mode', 'workspace-write'],
    {
      env: cleanEnv({
        ANTHROPIC_API_KEY: providerKey,
        ANTHROPIC_BASE_URL: server.url,
        AGENT_HOME: home,
        ...(path === undefined ? {} : { PATH: path(repo) }),
        // Another user's CLI cannot use this one's home.
        ...(uid === undefined ? {} : { HOME: home }),
        ...options.env?.(dir.path),
      }),
      uid,
    },
  );
  const ran = await readFile(join(outside, 'hook-ran'), 'utf8').catch(() => '');
  return { run, outside, ran, repo };
}

/** A call, then `plant` (what a sandboxed command or a file tool writes), a call, and the answer. */
export function plantTurns(plant: readonly Turn[]): Turn[] {
  return [
    { tool: { name: 'list_files', input: { path: '.' } } },
    ...plant,
    { tool: { name: 'list_files', input: { path: '.' } } },
    { text: 'done' },
  ];
}

/** Two calls that change no file, then the answer. */
export function untouchedTurns(): Turn[] {
  return [
    { tool: { name: 'list_files', input: { path: '.' } } },
    { tool: { name: 'glob', input: { pattern: '*' } } },
    { text: 'done' },
  ];
}

/** The session of {@link untouchedTurns} ended well, its hook run after each of the two calls. */
export function expectRanAfterEachCall(session: Awaited<ReturnType<typeof runHookSession>>): void {
  expect(session.run.code, session.run.stderr).toBe(0);
  expect(session.ran).toBe('ran\nran\n');
  expect(session.run.stderr).not.toContain('did not run');
}

/**
 * The session ended well; what a sandboxed command planted did not run outside the sandbox (no
 * `OUTSIDE/escaped`); the hook ran `ranBefore` times — the control: outside the sandbox, it can
 * write there — and was then stopped, its notice naming `command` (and `changed`, the files).
 */
export function expectStoppedAfterChange(
  session: Awaited<ReturnType<typeof runHookSession>>,
  expected: { command: string; ranBefore: number; changed?: string },
): void {
  const { run, outside, ran } = session;
  expect(run.code, run.stderr).toBe(0);
  expect(existsSync(join(outside, 'escaped')), 'what was planted ran outside the sandbox').toBe(
    false,
  );
  expect(ran, run.stderr).toBe('ran\n'.repeat(expected.ranBefore));
  expect(run.stderr).toContain(
    `PostToolUse hook "${expected.command}" did not run: the project files it runs changed during this session${expected.changed === undefined ? '' : ` (${expected.changed})`}`,
  );
}

/**
 * A test file of hook sessions: the CLI built, each test skipped where one of `tools` is missing
 * (`bwrap`, `python3`), and the list its folders are disposed from after each test.
 */
export function hookSessionSuite(
  ...tools: Parameters<typeof skipWithout>
): (() => Promise<void>)[] {
  const cleanups: (() => Promise<void>)[] = [];
  beforeAll(assertBuilt);
  beforeEach(skipWithout(...tools));
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });
  return cleanups;
}
