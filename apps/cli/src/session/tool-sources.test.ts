// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is written into config files as users write it, not a template.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseMcpServers, readMcpConfig } from '../config/mcp-servers.js';
import { assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';

/** The user's own file: a home for `~`, an environment for `${VAR}`. */
const yours = { home: '/home/me', env: { GITHUB_PAT: 'ghp_x', EMPTY: '' } };
const ignore = () => undefined;

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
  it('leaves out a disabled server; takes Claude Code\'s "type" and ignores Cline\'s approval lists', async () => {
    const path = await configFile({
      mcpServers: {
        off: { command: 'npx', disabled: true },
        on: { command: 'npx', disabled: false, type: 'stdio', autoApprove: ['x'] },
        remote: { type: 'http', url: 'http://127.0.0.1:1/mcp', alwaysAllow: [] },
        legacy: { type: 'sse', url: 'http://127.0.0.1:1/sse' },
      },
    });
    expect(
      (await readMcpConfig(path, yours, ignore)).map((entry) => [entry.name, entry.transport.type]),
    ).toEqual([
      ['on', 'stdio'],
      ['remote', 'http'],
      ['legacy', 'http'],
    ]);
  });

  it('reads stdio servers (with or without env) and HTTP servers', async () => {
    const path = await configFile({
      mcpServers: {
        plain: { command: 'npx', args: ['-y', 'server'] },
        withEnv: { command: 'node', env: { TOKEN: 't' }, cwd: '/srv' },
        remote: { url: 'https://example.test/mcp', headers: { Authorization: 'Bearer x' } },
        bare: { url: 'http://127.0.0.1:1/mcp' },
      },
    });
    expect(await readMcpConfig(path, yours, ignore)).toEqual([
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
    [{ mcpServers: { x: { command: 'a', arg: ['b'] } } }, 'server "x" has an unknown key "arg"'],
    [{ mcpServers: { x: { command: 'a', envs: {} } } }, 'has an unknown key "envs" (known:'],
    [{ mcpServers: { x: { url: 'http://h', header: {} } } }, 'has an unknown key "header"'],
    [{ mcpServers: { x: { command: 'a', timeout: 30 } } }, 'has an unknown key "timeout"'],
    [{ mcpServers: { x: { command: 'a', cwd: 5 } } }, 'has "cwd" that is not a string'],
    [
      { mcpServers: { x: { command: 'a', disabled: 'yes' } } },
      '"disabled" that is not true or false',
    ],
    [
      { mcpServers: { x: { command: 'a', type: 'http' } } },
      'a server with "command" is of type stdio',
    ],
    [{ mcpServers: { x: { url: 'http://h', type: 'stdio' } } }, '"url" is of type http'],
    [
      { mcpServers: { x: { url: 'http://h', args: ['a'] } } },
      'has "args", which only a server started',
    ],
    [{ mcpServers: { x: { url: 'http://h', env: {} } } }, 'has "env", which only a server started'],
    [
      { mcpServers: { x: { command: 'a', headers: {} } } },
      'has "headers", which only a server reached',
    ],
    [{ mcpServers: { x: ['a'] } }, 'server "x" is not an object'],
  ])('rejects %j', async (content, message) => {
    await expect(readMcpConfig(await configFile(content), yours, ignore)).rejects.toThrow(message);
  });
});

describe("a stdio server's own PATH", () => {
  // `"env": { "PATH": "./bin:/usr/bin" }` named the folder the server starts in: a `./bin/node`
  // a sandboxed command wrote there ran as the user, outside the sandbox, at its next start.
  it('keeps only absolute entries (~ expanded), and none at all when none is absolute', async () => {
    const path = await configFile({
      mcpServers: {
        mixed: { command: 'node', env: { PATH: './bin::/usr/bin:~/bin:.', TOKEN: 't' } },
        relative: { command: 'node', env: { PATH: './node_modules/.bin' } },
        absolute: { command: 'node', env: { PATH: '/opt/bin:/usr/bin' } },
      },
    });
    const said: string[] = [];
    const entries = await readMcpConfig(path, yours, (line) => said.push(line));
    expect(entries.map((entry) => entry.transport)).toEqual([
      {
        type: 'stdio',
        command: 'node',
        args: [],
        env: { PATH: '/usr/bin:/home/me/bin', TOKEN: 't' },
      },
      { type: 'stdio', command: 'node', args: [], env: {} },
      { type: 'stdio', command: 'node', args: [], env: { PATH: '/opt/bin:/usr/bin' } },
    ]);
    // Said for the user's own file too (it was dropped unsaid: a server then missing its ./bin).
    expect(said).toEqual([
      expect.stringContaining('server "mixed" of The MCP config'),
      expect.stringContaining('server "relative" of The MCP config'),
    ]);
    expect(said[0]).toContain('PATH entries left out of its env: ./bin, "" (empty), .');
  });

  it('--mcp-config: the CLI says which entries of a server of yours were left out', async () => {
    assertBuilt();
    const path = await configFile({
      mcpServers: { tools: { command: '/bin/true', env: { PATH: './bin:/usr/bin' } } },
    });
    const dir = await tempDir('agent-cli-mcp-path-');
    cleanups.push(dir.dispose);
    const script = join(dir.path, 'script.json');
    await writeFile(script, JSON.stringify([{ text: 'done' }]));
    const run = await runCli(['-p', 'go', '--scripted', script, '--mcp-config', path], {
      cwd: dir.path,
      env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }),
    });
    expect(run.stderr).toContain('server "tools" of The MCP config');
    expect(run.stderr).toContain('PATH entries left out of its env: ./bin');
  });

  it("a project's entry: the same, and said", () => {
    const { entries, notices } = parseMcpServers(
      { local: { command: 'node', args: ['server.js'], env: { PATH: 'bin:/usr/bin' } } },
      '/repo/.mcp.json',
      { home: '/home/me' },
    );
    expect(entries.map((entry) => entry.transport)).toEqual([
      { type: 'stdio', command: 'node', args: ['server.js'], env: { PATH: '/usr/bin' } },
    ]);
    expect(notices).toEqual([
      expect.stringContaining(
        'server "local" of /repo/.mcp.json: PATH entries left out of its env: bin',
      ),
    ]);
  });
});

describe("~ and ${VAR} in an mcpServers entry (Claude Code's .mcp.json expansion)", () => {
  it('expands a leading ~ in command, args and cwd, and ${VAR} / ${VAR:-default} everywhere', async () => {
    const path = await configFile({
      mcpServers: {
        local: {
          command: '~/bin/server',
          args: ['~', '~/data', 'a~/b', '--token=${GITHUB_PAT}', '${EMPTY:-fallback}', '$HOME'],
          cwd: '~/work',
          env: { TOKEN: '${GITHUB_PAT}', PLAIN: '~/not-a-path' },
        },
        remote: {
          url: 'https://example.test/mcp?key=${GITHUB_PAT}',
          headers: { Authorization: 'Bearer ${GITHUB_PAT}' },
        },
      },
    });
    expect(await readMcpConfig(path, yours, ignore)).toEqual([
      {
        name: 'local',
        transport: {
          type: 'stdio',
          command: '/home/me/bin/server',
          args: ['/home/me', '/home/me/data', 'a~/b', '--token=ghp_x', 'fallback', '$HOME'],
          env: { TOKEN: 'ghp_x', PLAIN: '~/not-a-path' },
          cwd: '/home/me/work',
        },
      },
      {
        name: 'remote',
        transport: {
          type: 'http',
          url: 'https://example.test/mcp?key=ghp_x',
          headers: { Authorization: 'Bearer ghp_x' },
        },
      },
    ]);
  });

  it.each([
    [{ command: 'node', env: { TOKEN: '${MISSING}' } }, 'env.TOKEN'],
    [{ url: 'https://x.test/${MISSING}' }, 'url'],
    [
      { url: 'https://x.test/', headers: { Authorization: 'Bearer ${EMPTY}' } },
      'headers.Authorization',
    ],
    [{ command: '${MISSING}/bin/server' }, 'command'],
  ])(
    'an unset variable with no default in %j is an error naming the server and key',
    async (server, where) => {
      const path = await configFile({ mcpServers: { s: server } });
      await expect(readMcpConfig(path, yours, ignore)).rejects.toThrow(
        new RegExp(
          `server "s" names \\$\\{(MISSING|EMPTY)\\} in "${where.replace('.', '\\.')}", which is not set`,
        ),
      );
    },
  );
});
