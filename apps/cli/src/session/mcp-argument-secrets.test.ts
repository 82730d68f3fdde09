import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { argumentKeyNotice } from '../config/command-secrets.js';
import { mcpServerSecrets } from '../config/mcp-servers.js';
import { messagesServer } from '../testing/messages-server.js';
import { appDir, assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';

// A stdio MCP server's key given as an argument — as READMEs show it as often as in `env`
// (`--api-key`, `--token=`, mcp-remote's `--header "Authorization: Bearer …"`, the Postgres
// server's connection URL) — was no known secret: a server echoing its command line (a usage
// error, a log line) handed it to the model, the terminal and the session file.

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const values = {
  apiKey: 'opaque-api-key-value-5c1d',
  assigned: 'assigned-token-value-77ab',
  bearer: 'bearer-token-value-e3f0aa',
  password: 'pg-password-value-61d2',
  github: `ghp_${'R7t2'.repeat(9)}`,
  query: 'query-key-value-0b9c1d',
};
const args = [
  join(appDir, 'src/__fixtures__/env-server.mjs'),
  '--api-key',
  values.apiKey,
  `--auth-token=${values.assigned}`,
  '--header',
  `Authorization: Bearer ${values.bearer}`,
  `postgresql://app:${values.password}@db.internal:5432/app`,
  values.github,
  `https://hosted.example/sse?api_key=${values.query}`,
  // Not credentials: left as they are.
  '--port',
  '8123',
  '--region=eu-west-1',
];

describe("a stdio MCP server's credentials given as arguments", () => {
  it('a server that echoes its arguments: the model, the output and the session file read markers', async () => {
    const dir = await tempDir('agent-cli-mcp-argument-secrets-');
    cleanups.push(dir.dispose);
    const mcpConfig = join(dir.path, 'mcp.json');
    await writeFile(
      mcpConfig,
      JSON.stringify({ mcpServers: { argserver: { command: process.execPath, args } } }),
    );
    const server = await messagesServer(
      [{ tool: { name: 'argserver__argv', input: {} } }, { text: 'Read.' }],
      cleanups,
    );
    const saved = join(dir.path, 'saved.json');
    const run = await runCli(
      [
        '-p',
        'go',
        '--provider',
        'anthropic',
        '--cwd',
        dir.path,
        '--mcp-config',
        mcpConfig,
        '--allow',
        'argserver__argv',
        '--output-format',
        'stream-json',
        '--save',
        saved,
      ],
      {
        env: cleanEnv({
          ANTHROPIC_API_KEY: `sk-ant-api03-${'a1B2'.repeat(20)}`,
          AGENT_HOME: join(dir.path, 'home'),
          ANTHROPIC_BASE_URL: server.url,
        }),
      },
    );
    expect(run.code, run.stderr).toBe(0);
    const sent = server.bodies.slice(1).join('\n');
    // Checked as booleans: a failure would print the whole request.
    expect(sent.includes('[redacted:argserver.arg --api-key]'), 'the marker').toBe(true);
    expect(sent.includes('\\n8123\\n--region=eu-west-1'), 'plain arguments kept').toBe(true);
    const written = `${sent}\n${run.stdout}\n${run.stderr}\n${await readFile(saved, 'utf8')}`;
    const shown = Object.entries(values).filter(([, value]) => written.includes(value));
    expect(shown.map(([kind]) => kind)).toEqual([]);
    // The server's command line is every user's to read while it runs: the start says so,
    // naming where the keys are (never the keys), and not the plain arguments.
    const notice = run.stderr
      .split('\n')
      .find((line) => line.startsWith('mcp argserver: its arguments hold a key'));
    expect(notice).toContain('/proc/<pid>/cmdline');
    for (const where of ['--api-key', '--auth-token', 'Authorization', 'argument 7'])
      expect(notice).toContain(where);
    expect(notice).not.toContain('--port');
    expect(notice).not.toContain('--region');
  });

  it('argumentKeyNotice: none for arguments that hold no key', () => {
    expect(
      argumentKeyNotice('s', ['--port', '8123', '--region=eu-west-1', '/srv/data']),
    ).toBeUndefined();
    expect(
      argumentKeyNotice('s', ['-y', '@modelcontextprotocol/server-filesystem', '/home/me']),
    ).toBeUndefined();
  });

  it('mcpServerSecrets names each, and what is no credential is judged by the rules later', () => {
    const secrets = mcpServerSecrets([
      { name: 's', transport: { type: 'stdio', command: 'node', args } },
    ] as never);
    expect(secrets['s.arg --api-key']).toBe(values.apiKey);
    expect(secrets['s.arg --auth-token']).toBe(values.assigned);
    expect(secrets['s.arg Authorization token']).toBe(values.bearer);
    expect(secrets['s.arg 6 url password']).toBe(values.password);
    expect(secrets['s.arg 8.url api_key']).toBe(values.query);
  });
});
