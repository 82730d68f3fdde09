import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readMcpConfig } from '../config/mcp-servers.js';
import { tempDir } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function configFile(content: unknown): Promise<string> {
  const dir = await tempDir('agent-cli-mcp-');
  cleanups.push(dir.dispose);
  const path = join(dir.path, 'mcp.json');
  await writeFile(path, JSON.stringify(content));
  return path;
}

describe('readMcpConfig', () => {
  it('reads stdio servers (with or without env) and HTTP servers', async () => {
    const path = await configFile({
      mcpServers: {
        plain: { command: 'npx', args: ['-y', 'server'] },
        withEnv: { command: 'node', env: { TOKEN: 't' }, cwd: '/srv' },
        remote: { url: 'https://example.test/mcp', headers: { Authorization: 'Bearer x' } },
        bare: { url: 'http://127.0.0.1:1/mcp' },
      },
    });
    expect(await readMcpConfig(path)).toEqual([
      { name: 'plain', transport: { type: 'stdio', command: 'npx', args: ['-y', 'server'] } },
      {
        name: 'withEnv',
        transport: { type: 'stdio', command: 'node', args: [], env: { TOKEN: 't' }, cwd: '/srv' },
      },
      {
        name: 'remote',
        transport: {
          type: 'http',
          url: 'https://example.test/mcp',
          headers: { Authorization: 'Bearer x' },
        },
      },
      { name: 'bare', transport: { type: 'http', url: 'http://127.0.0.1:1/mcp' } },
    ]);
  });

  it.each([
    [{}, 'needs an object "mcpServers"'],
    [{ mcpServers: { x: { args: [] } } }, 'server "x" needs "command" (a program to run) or "url"'],
    [
      { mcpServers: { x: { command: 5 } } },
      'server "x" has "command" that is not a string: "command" must be a string',
    ],
    [{ mcpServers: { x: { command: ['node', 's.js'] } } }, '"command" must be a string'],
    [{ mcpServers: { x: { command: null } } }, '"command" must be a string'],
    [{ mcpServers: { x: { url: 5 } } }, '"url" must be a string'],
    [{ mcpServers: { x: { url: { href: 'http://h' } } } }, '"url" must be a string'],
    [{ mcpServers: { x: { command: 'a', url: 'http://h' } } }, 'has both "command" and "url"'],
    [{ mcpServers: { x: 'npx server' } }, 'server "x" is not an object'],
    [{ mcpServers: { x: { command: 'a', args: 'b' } } }, '"args" that are not a list of strings'],
    [{ mcpServers: { x: { command: 'a', env: { N: 1 } } } }, '"env" values that are not strings'],
  ])('rejects %j', async (content, message) => {
    await expect(readMcpConfig(await configFile(content))).rejects.toThrow(message);
  });
});
