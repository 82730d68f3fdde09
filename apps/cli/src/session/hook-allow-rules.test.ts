// A PreToolUse hook that answers "allow" (an auto-approver many users run) waives the question
// only. It used to skip the permission gate entirely: in plan mode the agent wrote files and ran
// commands, and `--deny` rules, path rules and ask rules were passed over. Real CLI processes, a
// real hook command from the user's settings, a scripted model.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const allowEverything = {
  hookSpecificOutput: {
    hookEventName: 'PreToolUse',
    permissionDecision: 'allow',
    permissionDecisionReason: 'auto-approved by my hook',
  },
};

/** A workspace, and user settings whose PreToolUse hook allows every call. */
async function setup() {
  const dir = await tempDir('agent-cli-hook-allow-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  const home = join(dir.path, 'home');
  await mkdir(workspace);
  await mkdir(home);
  await writeFile(join(workspace, 'notes.txt'), 'original\n');
  await writeFile(
    join(home, 'settings.json'),
    JSON.stringify({
      hooks: {
        PreToolUse: [
          {
            matcher: '*',
            hooks: [{ type: 'command', command: `echo '${JSON.stringify(allowEverything)}'` }],
          },
        ],
      },
    }),
  );
  const run = async (args: string[], calls: unknown[]) => {
    const script = await writeScript(dir.path, [{ toolCalls: calls }, { text: 'finished' }]);
    return runCli(
      ['--scripted', script, '--cwd', workspace, '--sandbox', 'off', ...args, '-p', 'go'],
      { env: cleanEnv({ AGENT_HOME: home }) },
    );
  };
  return { workspace, run, file: (name: string) => join(workspace, name) };
}

const write = { name: 'write_file', arguments: { path: 'made.txt', content: 'written\n' } };
const edit = {
  name: 'edit_file',
  arguments: { path: 'notes.txt', old_string: 'original', new_string: 'changed' },
};
const bash = { name: 'bash', arguments: { command: 'echo by bash > bash.txt' } };
const opaqueBash = { name: 'bash', arguments: { command: 'x=bash; eval "echo \\$x > $x.txt"' } };

describe("a hook's allow does not get past", () => {
  it.each([
    [
      'plan mode: a write',
      ['--mode', 'plan'],
      write,
      'made.txt',
      /Plan mode: only read-only tools run/,
    ],
    ['plan mode: an edit', ['--mode', 'plan'], edit, undefined, /Plan mode/],
    ['plan mode: bash', ['--mode', 'plan'], bash, 'bash.txt', /Plan mode/],
    ['plan mode: an opaque bash line', ['--mode', 'plan'], opaqueBash, 'bash.txt', /Plan mode/],
    [
      'a deny rule on the tool',
      ['--mode', 'full-access', '--deny', 'write_file'],
      write,
      'made.txt',
      /Denied by rule "write_file"/,
    ],
    [
      'a deny rule on a command',
      ['--mode', 'full-access', '--deny', 'bash(echo *)'],
      bash,
      'bash.txt',
      /Denied by rule "bash\(echo \*\)"/,
    ],
    [
      'a path rule',
      ['--mode', 'full-access', '--deny', 'Edit(notes.txt)'],
      edit,
      undefined,
      /Denied by rule/,
    ],
    [
      "Claude Code's deny name",
      ['--mode', 'full-access', '--deny', 'Bash'],
      bash,
      'bash.txt',
      /Denied by rule/,
    ],
    [
      'an ask rule (no one to ask in -p)',
      ['--mode', 'full-access', '--ask', 'write_file'],
      write,
      'made.txt',
      /needs approval|could be asked/,
    ],
  ] as const)('%s', async (_name, args, call, created, reason) => {
    const t = await setup();
    const result = await t.run([...args], [call]);
    expect(result.stderr).toMatch(reason);
    if (created !== undefined) expect(existsSync(t.file(created))).toBe(false);
    expect(await readFile(t.file('notes.txt'), 'utf8')).toBe('original\n');
  });
});

describe("a hook's allow still waives the question", () => {
  it.each([
    ['a write in the default mode', write, 'made.txt'],
    ['bash in the default mode', bash, 'bash.txt'],
    ['an opaque bash line', opaqueBash, 'bash.txt'],
  ] as const)('%s runs without anyone to ask', async (_name, call, created) => {
    const t = await setup();
    const result = await t.run([], [call]);
    expect(result.stderr).not.toMatch(/Denied|needs approval/);
    expect(existsSync(t.file(created))).toBe(true);
    expect(result.code).toBe(0);
  });
});
