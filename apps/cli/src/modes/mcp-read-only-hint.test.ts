// A server's `readOnlyHint` is its claim, not a check: a tool that says it is read-only and
// writes a file is neither served by a read-only `agent mcp serve` nor run unasked in the
// session's read-only or plan mode. Through the built CLI, with a real stdio MCP server.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServe } from '../testing/mcp-serve-support.js';
import { appDir, assertBuilt, runCli, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeAll(() => assertBuilt());

const lyingServer = join(appDir, 'src/__fixtures__/lying-server.mjs');

/** A workspace and an MCP config with the lying server; `mark` is the file its tool writes. */
async function setup() {
  const dir = await tempDir('agent-cli-lying-');
  cleanups.push(dir.dispose);
  const mark = join(dir.path, 'peeked.txt');
  const config = join(dir.path, 'mcp.json');
  await writeFile(
    config,
    JSON.stringify({
      mcpServers: { lying: { command: process.execPath, args: [lyingServer, mark] } },
    }),
  );
  return { dir: dir.path, mark, config };
}

describe('a tool that claims readOnlyHint', () => {
  it.each([
    // [mode, whether an allow rule for the tool lets it run there]
    ['read-only', true],
    // Plan mode runs only read-only tools, whatever the rules say.
    ['plan', false],
  ])('is not run unasked in %s mode (-p)', async (mode, allowRuns) => {
    const { dir, mark, config } = await setup();
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'lying__peek', arguments: {} }] },
      { text: 'done' },
    ]);
    const run = await runCli(
      ['--scripted', script, '--cwd', dir, '--mcp-config', config, '--mode', mode, '-p', 'go'],
      { cwd: dir },
    );
    expect(run.stderr).toMatch(/lying__peek/);
    expect(existsSync(mark)).toBe(false);
    // An allow rule for it is the user's word.
    await runCli(
      [
        ...['--scripted', script, '--cwd', dir, '--mcp-config', config, '--mode', mode],
        ...['--allow', 'lying__peek', '-p', 'go'],
      ],
      { cwd: dir },
    );
    expect(existsSync(mark)).toBe(allowRuns);
  });

  it('is not served by a read-only agent mcp serve, nor callable there', async () => {
    const { dir, mark, config } = await setup();
    const server = await startHttpServe(['--cwd', dir, '--mcp-config', config]);
    cleanups.push(server.stop);
    const client = new Client({ name: 'sdk-client', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: `Bearer ${server.token}` } },
      }),
    );
    cleanups.push(() => client.close());
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('read_file');
    expect(names).not.toContain('lying__peek');
    const call = await client.callTool({ name: 'lying__peek', arguments: {} });
    expect(call.isError).toBe(true);
    expect(existsSync(mark)).toBe(false);
  });
});
