import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { McpStdioTransportConfig } from './mcp-options.js';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { nodeServer, referenceServerEntry, testContext } from './test-helpers.js';

// What a stdio MCP server sees of the host's environment, asked of the reference "everything"
// server's get-env tool: never a credential of the host, unless passEnv names it or the server's
// own config `env` gives it.

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const key = `sk-proj-${'Ab3'.repeat(16)}`;
const secrets: Record<string, string> = {
  OPENAI_API_KEY: key,
  ANTHROPIC_API_KEY: `sk-ant-api03-${'xY9_'.repeat(20)}`,
  MY_SECRET: 'hunter2-but-longer',
  GITHUB_TOKEN: 'gh-token-value-1234',
  INNOCENT_LOOKING: `ghp_${'A1b2'.repeat(9)}`,
};
const saved = new Map<string, string | undefined>();
beforeAll(() => {
  for (const [name, value] of Object.entries({ ...secrets, ORDINARY_SETTING: 'kept-value' })) {
    saved.set(name, process.env[name]);
    process.env[name] = value;
  }
});
afterAll(() => {
  for (const [name, value] of saved) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});
const adapters: McpToolAdapter[] = [];
afterEach(async () => {
  await Promise.all(adapters.splice(0).map((adapter) => adapter.close()));
});

async function serverEnvironment(
  extra: Omit<McpStdioTransportConfig, 'type' | 'command' | 'args'>,
): Promise<Record<string, string>> {
  const adapter = await McpToolAdapter.connect({
    name: 'everything',
    transport: nodeServer(referenceServerEntry('everything'), ['stdio'], extra),
  });
  adapters.push(adapter);
  const tool = adapter.tools().find((candidate) => candidate.name === 'everything__get-env');
  if (tool === undefined) throw new Error('no get-env tool');
  const result = await tool.execute({}, testContext());
  // What the server sent (its blocks in details): the model's copy has configured credentials
  // hidden (mcp-secrets.test.ts).
  const sent = result.details?.content[0];
  return JSON.parse(sent?.type === 'text' ? sent.text : '{}') as Record<string, string>;
}

function expectWithheld(environment: Record<string, string>, except: readonly string[] = []) {
  const text = JSON.stringify(environment);
  for (const [name, value] of Object.entries(secrets)) {
    if (except.includes(name)) continue;
    expect(environment[name]).toBeUndefined();
    expect(text).not.toContain(value);
  }
  expect(environment.PATH).toBeDefined();
}

describe('stdio MCP server environment', () => {
  it('by default: the minimal set, no credential', async () => {
    const environment = await serverEnvironment({});
    expectWithheld(environment);
    expect(environment.ORDINARY_SETTING).toBeUndefined();
  });

  it('inheritEnv: the host environment without its credentials', async () => {
    const environment = await serverEnvironment({ inheritEnv: true });
    expectWithheld(environment);
    expect(environment.ORDINARY_SETTING).toBe('kept-value');
  });

  it('passEnv adds the named host variables, with or without inheritEnv', async () => {
    const minimal = await serverEnvironment({ passEnv: ['GITHUB_TOKEN', 'NOT_SET_ANYWHERE'] });
    expect(minimal.GITHUB_TOKEN).toBe(secrets.GITHUB_TOKEN);
    expect('NOT_SET_ANYWHERE' in minimal).toBe(false);
    expectWithheld(minimal, ['GITHUB_TOKEN']);
    const inherited = await serverEnvironment({ inheritEnv: true, passEnv: ['MY_SECRET'] });
    expect(inherited.MY_SECRET).toBe(secrets.MY_SECRET);
    expectWithheld(inherited, ['MY_SECRET']);
  });

  it("the server's own config env is passed as given", async () => {
    const environment = await serverEnvironment({
      env: { SERVER_API_KEY: 'configured-key-value', OPENAI_API_KEY: 'for-this-server-only' },
    });
    expect(environment.SERVER_API_KEY).toBe('configured-key-value');
    expect(environment.OPENAI_API_KEY).toBe('for-this-server-only');
    expectWithheld(environment, ['OPENAI_API_KEY']);
    expect(JSON.stringify(environment)).not.toContain(key);
  });

  it('a sandboxed server with inheritEnv gets no credential either', async (context) => {
    skipWithout('bwrap')(context);
    const environment = await serverEnvironment({
      inheritEnv: true,
      sandbox: { mode: 'required', readableRoots: [repoRoot] },
    });
    expectWithheld(environment);
    expect(environment.ORDINARY_SETTING).toBe('kept-value');
  });
});
