// A --deny rule of the command line that names no tool of the session — a typo (`bsh(rm *)`),
// another agent's name for the shell (Cursor's `Shell(rm)`, Gemini CLI's `run_shell_command`):
// it protects nothing. It was a warning, and the command it was meant to stop ran (a file removed
// in full-access). Now the start refuses it, before anything runs. A real tool left out with
// --tools, a server's tools (mcp__…) and a settings file's rule stay warnings.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function workspaceWithVictim() {
  const dir = await tempDir('agent-deny-typo-');
  cleanups.push(dir.dispose);
  const victim = join(dir.path, 'victim.txt');
  await writeFile(victim, 'keep me');
  const script = await writeScript(dir.path, [
    { toolCalls: [{ name: 'bash', arguments: { command: 'rm -f victim.txt' } }] },
    { text: 'done' },
  ]);
  const home = join(dir.path, 'home');
  const run = (...args: string[]) =>
    runCli(
      [
        '--scripted',
        script,
        '--cwd',
        dir.path,
        '--sandbox',
        'off',
        '--mode',
        'full-access',
        '-p',
        'go',
        ...args,
      ],
      { env: cleanEnv({ AGENT_HOME: home }) },
    );
  return { run, victim, home };
}

describe('--deny naming no tool of the session', () => {
  it.each([
    ['bsh(rm *)', 'no tool of this session matches "bsh" (did you mean bash'],
    ['Shell(rm)', 'no tool of this session matches "Shell"'],
    ['run_shell_command(rm)', 'no tool of this session matches "run_shell_command"'],
  ])(
    '--deny %s: refused at the start, nothing runs',
    async (rule, why) => {
      const { run, victim } = await workspaceWithVictim();
      const result = await run('--deny', rule);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`agent: --deny "${rule}" can never match: ${why}`);
      expect(result.stderr).toContain(
        'A deny rule that matches nothing protects nothing, so agent did not start',
      );
      expect(result.stdout).toBe('');
      expect(existsSync(victim)).toBe(true);
    },
    60_000,
  );

  it('controls: a tool left out with --tools, an MCP server’s, a settings file’s rule warn; the right name denies', async () => {
    const { run, victim, home } = await workspaceWithVictim();
    const leftOut = await run('--tools', 'read_file,bash', '--deny', 'write_file(x.txt)');
    expect(leftOut.stderr).toContain('warning: deny rule "write_file(x.txt)" can never match');
    expect(leftOut.code).toBe(0);
    await writeFile(victim, 'keep me');
    const server = await run('--deny', 'mcp__github__*', '--deny', 'bash(rm *)');
    expect(server.stderr).toContain('warning: deny rule "mcp__github__*" can never match');
    expect(server.stderr).toContain('Denied by rule "bash(rm *)"');
    expect(existsSync(victim)).toBe(true);
    await mkdir(home, { recursive: true });
    await writeFile(
      join(home, 'settings.json'),
      JSON.stringify({ permissions: { deny: ['bsh(rm *)'] } }),
    );
    const fromSettings = await run('--deny', 'bash(rm *)');
    expect(fromSettings.stderr).toContain('warning: deny rule "bsh(rm *)" can never match');
    expect(fromSettings.code).toBe(0);
    expect(existsSync(victim)).toBe(true);
  }, 120_000);

  it('agent mcp serve: the same --deny typo refuses to serve (it warned and served the rm)', async () => {
    const { victim } = await workspaceWithVictim();
    const cwd = dirname(victim);
    const serve = (rule: string) =>
      runCli(
        ['mcp', 'serve', '--cwd', cwd, '--mode', 'full-access', '--sandbox', 'off', '--deny', rule],
        { env: cleanEnv({ AGENT_HOME: join(cwd, 'home') }) },
      );
    const typo = await serve('bsh(rm *)');
    expect(typo.stderr).toContain('--deny "bsh(rm *)" can never match: no tool of this session');
    expect(typo.stderr).toContain('so agent did not start');
    expect(typo.code).toBe(1);
    const right = await serve('bash(rm *)');
    expect(right.stderr).not.toContain('can never match');
    expect(right.code).toBe(0);
  }, 60_000);
});
