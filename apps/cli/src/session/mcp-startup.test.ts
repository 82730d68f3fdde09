// Starting MCP servers: a server that takes a while is named on stderr while it is waited for,
// and one that never answers gives up after the configured timeout with a message naming it.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A workspace whose config has a server that starts and never says a word, and a real one. */
async function setup() {
  const dir = await tempDir('agent-cli-mcp-start-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  await mkdir(home);
  const memory = join(appDir, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
  const config = join(dir.path, 'mcp.json');
  await writeFile(
    config,
    JSON.stringify({
      mcpServers: {
        silent: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 60_000)'] },
        memory: {
          command: process.execPath,
          args: [memory],
          env: { MEMORY_FILE_PATH: join(dir.path, 'memory.jsonl') },
        },
      },
    }),
  );
  const script = await writeScript(dir.path, [
    { toolCalls: [{ name: 'memory__read_graph', arguments: {} }] },
    { text: 'done' },
  ]);
  return { dir: dir.path, home, config, script };
}

describe('MCP servers at start', () => {
  it('--mcp-timeout: a server that never answers is named while waited for, then skipped; the others serve', async () => {
    const { dir, home, config, script } = await setup();
    const run = await runCli(
      [
        '-p',
        'go',
        '--scripted',
        script,
        '--mcp-config',
        config,
        '--mcp-timeout',
        // Long enough for the real server to start on a busy machine (2 s was not, in CI).
        '6',
        '--cwd',
        dir,
        // A server's readOnlyHint does not let its tools run unasked.
        '--allow',
        'memory__read_graph',
      ],
      { env: cleanEnv({ AGENT_HOME: home }) },
    );
    expect(run.stderr).toContain('connecting to MCP server silent… (waiting up to 6 s');
    expect(run.stderr).toContain(
      'mcp silent: could not connect, skipped: no answer within 6 s (--mcp-timeout <s> or "mcpTimeout" in settings gives servers longer)',
    );
    expect(run.stderr).toContain('✓ memory__read_graph');
    expect(run.stdout).toBe('done\n');
    expect(run.code).toBe(0);
  });

  it('"mcpTimeout" in the settings sets it; the flag wins', async () => {
    const { dir, home, config, script } = await setup();
    await writeFile(join(home, 'settings.json'), JSON.stringify({ mcpTimeout: 1.5 }));
    const env = cleanEnv({ AGENT_HOME: home });
    const fromSettings = await runCli(
      ['-p', 'go', '--scripted', script, '--mcp-config', config, '--cwd', dir],
      { env },
    );
    expect(fromSettings.stderr).toContain('connecting to MCP server silent… (waiting up to 1.5 s');
    expect(fromSettings.stderr).toContain('no answer within 1.5 s');
    const fromFlag = await runCli(
      [
        '-p',
        'go',
        '--scripted',
        script,
        '--mcp-config',
        config,
        '--cwd',
        dir,
        '--mcp-timeout',
        '2',
      ],
      { env },
    );
    expect(fromFlag.stderr).toContain('no answer within 2 s');
  });

  it.each([
    [['--mcp-timeout', '0'], 2, '--mcp-timeout takes seconds (a number > 0'],
    [['--mcp-timeout', 'soon'], 2, '--mcp-timeout takes seconds'],
  ])('%j is a usage error', async (args, code, message) => {
    const run = await runCli(['-p', 'x', ...args]);
    expect(run.code).toBe(code);
    expect(run.stderr).toContain(message);
  });

  it('a wrong "mcpTimeout" in a settings file names the file and the key', async () => {
    const { dir, home, script } = await setup();
    await writeFile(join(home, 'settings.json'), JSON.stringify({ mcpTimeout: '30' }));
    const run = await runCli(['-p', 'go', '--scripted', script, '--cwd', dir], {
      env: cleanEnv({ AGENT_HOME: home }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `${join(home, 'settings.json')}: "mcpTimeout" must be a number of seconds > 0`,
    );
  });
});
