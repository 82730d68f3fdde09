import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  runCli,
  shellQuoted,
  tempDir,
  writeScript,
} from '../testing/test-support.js';
import { agentsInstructions, loadSettings, readSettingsLayers } from './settings.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
beforeAll(() => assertBuilt());

async function project() {
  const dir = await tempDir('agent-cli-settings-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const workspace = join(dir.path, 'ws');
  await mkdir(join(workspace, '.agent'), { recursive: true });
  await mkdir(home, { recursive: true });
  return { dir: dir.path, home, workspace, env: cleanEnv({ AGENT_HOME: home }) };
}

describe('settings files', () => {
  it('a project settings file sets the mode and a deny rule the run obeys (flags still win)', async () => {
    const { dir, workspace, env } = await project();
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({ permissions: { defaultMode: 'full-access', deny: ['bash(rm *)'] } }),
    );
    await writeFile(join(workspace, 'keep.txt'), 'keep');
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'rm -f keep.txt' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo allowed-by-mode' } }] },
      { text: 'tried' },
    ]);
    const run = await runCli(
      ['-p', 'go', '--scripted', script, '--cwd', workspace, '--sandbox', 'off', '--trust'],
      { env },
    );
    expect(run.stderr).toContain('Denied by rule "bash(rm *)"');
    expect(run.stderr).toMatch(/✓ bash: allowed-by-mode/);
    expect(run.stdout).toBe('tried\n');

    // The flag wins over the settings' mode: read-only asks for a command that writes, and
    // nobody can answer.
    const again = await writeScript(
      dir,
      [{ toolCalls: [{ name: 'bash', arguments: { command: 'touch x' } }] }, { text: 'done' }],
      'again.json',
    );
    const strict = await runCli(
      [
        '-p',
        'go',
        '--scripted',
        again,
        '--cwd',
        workspace,
        '--mode',
        'read-only',
        '--sandbox',
        'off',
      ],
      { env },
    );
    expect(strict.code).toBe(4);
  });

  it('user, project and local files merge in order; a wrong key is an error naming file and key', async () => {
    const { home, workspace } = await project();
    await writeFile(
      join(home, 'settings.json'),
      JSON.stringify({ model: 'user-model', permissions: { allow: ['bash(git *)'] } }),
    );
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({ model: 'project-model', permissions: { deny: ['bash(rm *)'] } }),
    );
    await writeFile(
      join(workspace, '.agent', 'settings.local.json'),
      JSON.stringify({ sandbox: 'off', env: { FOO: 'bar' } }),
    );
    const settings = await loadSettings(workspace, home);
    expect(settings).toMatchObject({
      model: 'project-model',
      allow: ['bash(git *)'],
      deny: ['bash(rm *)'],
      sandbox: 'off',
      env: { FOO: 'bar' },
    });
    expect(settings.files).toHaveLength(3);
    // A project's file never stops the CLI: what it cannot use is left out, said (the rest applies).
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({ permission: {}, model: 'kept' }),
    );
    const unknown = await readSettingsLayers(workspace, home);
    expect(unknown[1]?.ignored).toEqual([
      expect.stringMatching(/settings\.json: unknown setting "permission".*; it is ignored$/),
    ]);
    expect(unknown[1]?.file.model).toBe('kept');
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({ permissions: { defaultMode: 'turbo', allow: ['Read'] } }),
    );
    const invalid = await readSettingsLayers(workspace, home);
    expect(invalid[1]?.ignored).toEqual([
      expect.stringMatching(/permissions\.defaultMode must be one of.*; it is left out$/),
    ]);
    expect(invalid[1]?.file.permissions?.allow).toEqual(['Read']);
    // The user's own: a value that cannot be used is an error naming file and key.
    await writeFile(join(home, 'settings.json'), JSON.stringify({ sandbox: 'maybe' }));
    await expect(loadSettings(workspace, home)).rejects.toThrow(
      /home\/settings\.json: "sandbox" must be one of/,
    );
  });

  it('.mcp.json in the project connects its servers', async () => {
    const { dir, workspace, env } = await project();
    const server = join(appDir, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
    await writeFile(
      join(workspace, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          memory: {
            command: process.execPath,
            args: [server],
            env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') },
          },
        },
      }),
    );
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'memory__read_graph', arguments: {} }] },
      { text: 'read the graph' },
    ]);
    const run = await runCli(
      [
        '-p',
        'go',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--sandbox',
        'off',
        '--trust',
        '--allow',
        'memory__read_graph',
      ],
      { env },
    );
    expect(run.stderr).toContain('✓ memory__read_graph');
    expect(run.code).toBe(0);
  });

  it('.mcp.json with a "command" that is not a string leaves the server out, naming the file, the server and the key', async () => {
    const { dir, workspace, env } = await project();
    await writeFile(
      join(workspace, '.mcp.json'),
      JSON.stringify({ mcpServers: { tools: { command: 5 } } }),
    );
    const script = await writeScript(dir, [{ text: 'ok' }]);
    const run = await runCli(['-p', 'go', '--scripted', script, '--cwd', workspace], { env });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      `${join(workspace, '.mcp.json')}: server "tools" has "command" that is not a string: "command" must be a string`,
    );
    expect(run.stderr).not.toContain('needs "command"');
  });

  it('a broken server in .mcp.json is reported and skipped; the others still serve', async () => {
    const { dir, workspace, env } = await project();
    const server = join(appDir, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
    await writeFile(
      join(workspace, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          broken: { command: join(dir, 'no-such-server') },
          memory: {
            command: process.execPath,
            args: [server],
            env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') },
          },
        },
      }),
    );
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'memory__read_graph', arguments: {} }] },
      { text: 'read the graph' },
    ]);
    const run = await runCli(
      [
        '-p',
        'go',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--sandbox',
        'off',
        '--trust',
        '--allow',
        'memory__read_graph',
      ],
      { env },
    );
    expect(run.stderr).toMatch(/mcp broken: could not connect, skipped: /);
    expect(run.stderr).toContain('✓ memory__read_graph');
    expect(run.stdout).toBe('read the graph\n');
    expect(run.code).toBe(0);
  });

  it('a PreToolUse hook in the settings blocks a call with exit 2; the model reads its stderr', async () => {
    const { dir, workspace, env } = await project();
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({
        permissions: { defaultMode: 'full-access' },
        hooks: {
          PreToolUse: [
            {
              matcher: 'bash',
              hooks: [
                {
                  type: 'command',
                  command:
                    'grep -q curl && { echo "no network from bash, use web_fetch" >&2; exit 2; }; exit 0',
                },
              ],
            },
          ],
        },
      }),
    );
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'curl example.com' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo fine' } }] },
      { text: 'ok' },
    ]);
    const run = await runCli(
      ['-p', 'go', '--scripted', script, '--cwd', workspace, '--sandbox', 'off', '--trust'],
      { env },
    );
    expect(run.stderr).toMatch(/✗ bash \[denied\]: .*no network from bash, use web_fetch/);
    expect(run.stderr).toMatch(/✓ bash: fine/);
    expect(run.code).toBe(0);
  });

  it('AGENTS.md of the user and of the project become system-prompt sections', async () => {
    const { home, workspace } = await project();
    expect(await agentsInstructions({ cwd: workspace }, home)).toBe('');
    await writeFile(join(home, 'AGENTS.md'), 'Answer in French.\n');
    await writeFile(join(workspace, 'AGENTS.md'), 'Run pnpm test before finishing.\n');
    const text = await agentsInstructions({ cwd: workspace }, home);
    expect(text).toContain('(user):\nAnswer in French.');
    expect(text).toContain('(project):\nRun pnpm test before finishing.');
    expect(text.indexOf('French')).toBeLessThan(text.indexOf('pnpm test'));
  });

  it('hooks from user and project files add up; UserPromptSubmit can block -p, Stop can send it on', async () => {
    const { dir, home, workspace, env } = await project();
    const log = join(dir, 'hooks.log');
    const hook = join(dir, 'hook.mjs');
    await writeFile(
      hook,
      `import { appendFileSync } from 'node:fs';
let input = ''; process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', () => {
  const event = JSON.parse(input);
  appendFileSync(${JSON.stringify(log)}, event.hook_event_name + ' ' + (process.argv[2] ?? '') + '\\n');
  if (event.hook_event_name === 'UserPromptSubmit' && event.prompt.includes('forbidden')) { process.stderr.write('not that prompt'); process.exit(2); }
  if (event.hook_event_name === 'Stop' && !event.stop_hook_active) { process.stderr.write('say more'); process.exit(2); }
});`,
    );
    const command = (label: string) => ({
      type: 'command',
      command: `${shellQuoted(process.execPath)} ${shellQuoted(hook)} ${label}`,
    });
    await writeFile(
      join(home, 'settings.json'),
      JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [command('user')] }] } }),
    );
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({
        hooks: {
          UserPromptSubmit: [{ hooks: [command('project')] }],
          Stop: [{ hooks: [command('stop')] }],
        },
      }),
    );
    const script = await writeScript(dir, [{ text: 'first' }, { text: 'second' }]);
    const blocked = await runCli(
      ['-p', 'a forbidden thing', '--scripted', script, '--cwd', workspace, '--trust'],
      { env },
    );
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toContain('Prompt blocked by a UserPromptSubmit hook: not that prompt');
    expect(blocked.stdout).toBe('');
    const run = await runCli(['-p', 'go', '--scripted', script, '--cwd', workspace, '--trust'], {
      env,
    });
    expect(run.stderr).toContain('A Stop hook sends the agent on: say more');
    expect(run.stdout).toBe('second\n');
    expect(run.code).toBe(0);
    const lines = (await readFile(log, 'utf8')).split('\n');
    expect(lines).toContain('UserPromptSubmit user');
    expect(lines).toContain('UserPromptSubmit project');
    expect(lines.filter((line) => line === 'Stop stop')).toHaveLength(2);
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({ hooks: { PreToolUs: [] } }),
    );
    const bad = await runCli(['-p', 'go', '--scripted', script, '--cwd', workspace, '--trust'], {
      env,
    });
    expect(bad.code).toBe(0);
    expect(bad.stderr).toMatch(/settings\.json: hooks: unknown key "PreToolUs".*; it is ignored/);
  });
});

describe('sessions', () => {
  it('every run is saved under $AGENT_HOME/sessions; --continue resumes the newest', async () => {
    const { dir, home, workspace, env } = await project();
    const first = await writeScript(dir, [{ text: 'first answer' }], 'first.json');
    expect(
      (await runCli(['-p', 'remember 42', '--scripted', first, '--cwd', workspace], { env })).code,
    ).toBe(0);
    const { listSessions } = await import('../session/sessions.js');
    const saved = await listSessions(workspace, home);
    expect(saved).toHaveLength(1);
    const second = await writeScript(dir, [{ text: 'second answer' }], 'second.json');
    const resumed = await runCli(
      ['-p', 'what number?', '--scripted', second, '--cwd', workspace, '--continue'],
      { env },
    );
    expect(resumed.stdout).toBe('second answer\n');
    // Continued in the same file: it now holds both runs.
    const { readFile } = await import('node:fs/promises');
    const conversation = JSON.parse(await readFile(saved[0]?.path as string, 'utf8')) as {
      messages: unknown[];
    };
    expect(JSON.stringify(conversation.messages)).toContain('remember 42');
    expect(JSON.stringify(conversation.messages)).toContain('second answer');
    expect(await listSessions(workspace, home)).toHaveLength(1);

    const elsewhere = join(dir, 'other');
    await mkdir(elsewhere);
    const none = await runCli(['-p', 'x', '--scripted', second, '--cwd', elsewhere, '--continue'], {
      env,
    });
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('No saved session for');
  });
});
