import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

// Issue 34, "Claude Code's format is accepted but does nothing": configuration written the way
// Claude Code's users write it, through the built CLI. Each form either works or is refused
// naming the file and the key.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
beforeAll(() => assertBuilt());

async function project(settings: unknown, where: 'project' | 'user' = 'project') {
  const dir = await tempDir('agent-cli-claude-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const workspace = join(dir.path, 'ws');
  await mkdir(join(workspace, '.agent'), { recursive: true });
  await mkdir(home, { recursive: true });
  const file =
    where === 'project' ? join(workspace, '.agent', 'settings.json') : join(home, 'settings.json');
  await writeFile(file, JSON.stringify(settings));
  return { dir: dir.path, workspace, file, env: cleanEnv({ AGENT_HOME: home }) };
}

function run(
  setup: Awaited<ReturnType<typeof project>>,
  script: string,
  extra: readonly string[] = [],
) {
  return runCli(['-p', 'go', '--scripted', script, '--cwd', setup.workspace, '--trust', ...extra], {
    env: setup.env,
  });
}

describe("Claude Code's rules", () => {
  it.each([
    ['--sandbox', 'off'],
    ['--sandbox', 'auto'],
  ])('allow Bash(touch:*) lets -p run touch (%s %s): exit 0, the file made', async (...flags) => {
    const setup = await project({ permissions: { allow: ['Bash(touch:*)'] } }, 'user');
    const script = await writeScript(setup.dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'touch made.txt' } }] },
      { text: 'made' },
    ]);
    const result = await run(setup, script, flags);
    expect(result.stderr).toContain('✓ bash');
    expect(existsSync(join(setup.workspace, 'made.txt'))).toBe(true);
    expect(result.code).toBe(0);
  });

  it('deny Bash(rm:*) holds in full-access mode, and names the rule as written', async () => {
    const setup = await project({ permissions: { deny: ['Bash(rm:*)'] } });
    await writeFile(join(setup.workspace, 'keep.txt'), 'keep');
    const script = await writeScript(setup.dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'rm -f keep.txt' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'rmdir nothing' } }] },
      { text: 'tried' },
    ]);
    const result = await run(setup, script, ['--mode', 'full-access']);
    expect(result.stderr).toContain('Denied by rule "Bash(rm:*)" for "rm -f keep.txt"');
    expect(result.stderr).toContain('Denied by rule "Bash(rm:*)" for "rmdir nothing"');
    expect(await readFile(join(setup.workspace, 'keep.txt'), 'utf8')).toBe('keep');
  });

  it('deny Read(./.env) keeps read_file and search off the file', async () => {
    const setup = await project({ permissions: { deny: ['Read(./.env)'] } });
    await writeFile(join(setup.workspace, '.env'), 'TOKEN=hunter2\n');
    await writeFile(join(setup.workspace, 'notes.txt'), 'TOKEN is set elsewhere\n');
    const script = await writeScript(setup.dir, [
      { toolCalls: [{ name: 'read_file', arguments: { path: '.env' } }] },
      { toolCalls: [{ name: 'search', arguments: { pattern: 'TOKEN' } }] },
      { text: 'done' },
    ]);
    const result = await run(setup, script, ['--output-format', 'stream-json']);
    expect(result.stdout).not.toContain('hunter2');
    expect(result.stdout).toContain('Denied by rule \\"Read(./.env)\\"');
    expect(result.stdout).toContain('notes.txt');
  });

  it('deny Read(~/.ssh/**) is your home, with no warning that it can never match', async () => {
    const setup = await project({ permissions: { deny: ['Read(~/.ssh/**)'] } });
    const script = await writeScript(setup.dir, [
      { toolCalls: [{ name: 'read_file', arguments: { path: '/etc/hostname' } }] },
      { text: 'done' },
    ]);
    const result = await run(setup, script);
    expect(result.stderr).not.toContain('can never match');
  });

  it.each([
    ['allow', 'EnterPlanMode', "Claude Code's EnterPlanMode has no counterpart"],
    ['ask', 'WebFetch(https://example.com)', 'WebFetch takes domain:<host>'],
    ['deny', 'mcp__github__create_issue(x)', 'an MCP tool takes no specifier'],
    ['allow', 'WebFetch(domain:*.example.com)', 'a wildcard domain cannot be allowed'],
  ])('%s %s is left out, naming the file and the key; the run goes on', async (kind, rule, why) => {
    const setup = await project({ permissions: { [kind]: ['Bash(ls:*)', rule] } });
    const script = await writeScript(setup.dir, [{ text: 'answered' }]);
    const result = await run(setup, script);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`${setup.file}: permissions.${kind}[1]: `);
    expect(result.stderr).toContain(`Invalid permission rule "${rule}" in ${kind}: ${why}`);
    expect(result.stdout).toContain('answered');
  });
});

describe("Claude Code's hook matchers", () => {
  it('a PreToolUse hook with matcher "Bash" fires for bash and blocks it', async () => {
    const setup = await project({
      hooks: {
        PreToolUse: [
          {
            matcher: 'Bash',
            hooks: [{ type: 'command', command: 'echo "no shell in this repository" >&2; exit 2' }],
          },
        ],
      },
    });
    const script = await writeScript(setup.dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'touch blocked.txt' } }] },
      { text: 'blocked' },
    ]);
    const result = await run(setup, script, ['--mode', 'full-access']);
    expect(result.stderr).toContain('no shell in this repository');
    expect(existsSync(join(setup.workspace, 'blocked.txt'))).toBe(false);
  });

  it('a PostToolUse hook with matcher "Edit|Write" runs after write_file, reading tool_input.file_path', async () => {
    const setup = await project({
      hooks: {
        PostToolUse: [
          {
            matcher: 'Edit|Write',
            hooks: [
              {
                type: 'command',
                command: `node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>require("fs").appendFileSync("formatted.log",JSON.parse(s).tool_input.file_path+"\\n"))'`,
              },
            ],
          },
        ],
      },
    });
    const script = await writeScript(setup.dir, [
      { toolCalls: [{ name: 'write_file', arguments: { path: 'a.ts', content: 'x\n' } }] },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'a.ts' } }] },
      { text: 'written' },
    ]);
    await run(setup, script, ['--mode', 'workspace-write']);
    expect(await readFile(join(setup.workspace, 'formatted.log'), 'utf8')).toBe('a.ts\n');
  });

  it('a matcher naming a Claude Code tool with no counterpart leaves the hook out, naming the file and key', async () => {
    const setup = await project({
      hooks: {
        PreToolUse: [{ matcher: 'EnterPlanMode', hooks: [{ type: 'command', command: 'true' }] }],
      },
    });
    const script = await writeScript(setup.dir, [{ text: 'never' }]);
    const result = await run(setup, script);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      `${setup.file}: hooks.PreToolUse[0].matcher "EnterPlanMode" names Claude Code's EnterPlanMode, which has no counterpart`,
    );
  });
});
