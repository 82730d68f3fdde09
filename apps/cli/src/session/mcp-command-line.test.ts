// An MCP server whose program is not found, as a first --mcp-config goes wrong: the whole shell line
// in "command" (`"command": "npx -y @modelcontextprotocol/server-filesystem ."`, copied from a
// README), or a program not on the PATH. Before, the skip said "spawn npx -y … ENOENT" and nothing
// more; now it says what to change. The real CLI starts (fails to start) the real process.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function runWithServer(entry: Record<string, unknown>) {
  const dir = await tempDir('agent-mcp-command-line-');
  cleanups.push(dir.dispose);
  const config = join(dir.path, 'mcp.json');
  await writeFile(config, JSON.stringify({ mcpServers: { files: entry } }));
  const script = await writeScript(dir.path, [{ text: 'answered' }]);
  return runCli(
    [
      '--scripted',
      script,
      '--cwd',
      dir.path,
      '--mcp-config',
      config,
      '--mcp-timeout',
      '20',
      '-p',
      'hi',
    ],
    { env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }) },
  );
}

describe('an MCP server whose program is not found', () => {
  it('the whole command line in "command": says to put the arguments in "args"', async () => {
    const run = await runWithServer({
      command: 'npx -y @modelcontextprotocol/server-filesystem .',
    });
    expect(run.stderr).toContain(
      `— "command" holds a whole command line: it names the program alone ("npx"), and the rest goes in "args" (["-y","@modelcontextprotocol/server-filesystem","."])`,
    );
    // The session goes on without it.
    expect(run.stdout).toBe('answered\n');
    expect(run.code).toBe(0);
  }, 60_000);

  it('an existing program with its arguments in "command": the same', async () => {
    const run = await runWithServer({ command: `${process.execPath} server.mjs --stdio` });
    expect(run.stderr).toContain(
      `it names the program alone ("${process.execPath}"), and the rest goes in "args" (["server.mjs","--stdio"])`,
    );
  }, 60_000);

  it('a program not on the PATH, or a path that is not there', async () => {
    const missing = await runWithServer({ command: 'mcp-server-no-such-program', args: ['x'] });
    expect(missing.stderr).toContain(
      `— no program "mcp-server-no-such-program" was found (not on the PATH: check its spelling, install it, or give its full path)`,
    );
    const path = await runWithServer({ command: '/opt/no-such-dir/mcp-server' });
    expect(path.stderr).toContain(
      `— no program "/opt/no-such-dir/mcp-server" was found (check the path)`,
    );
  }, 60_000);
});
