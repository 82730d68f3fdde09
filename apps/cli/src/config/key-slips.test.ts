// API keys as they go wrong on a first day: blank (`export KEY=" "`), quotes kept from a .env file,
// another vendor's key in the variable. A blank key is no key (said at start, nothing sent); a
// refused one says which slip it is, never printing the key. The built CLI as a real process
// against a real HTTP server on 127.0.0.1 that refuses every key as the vendors do (401).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function scratch(): Promise<string> {
  const dir = await tempDir('agent-key-slips-');
  cleanups.push(dir.dispose);
  return dir.path;
}

async function refusingServer(): Promise<{ url: string; requests: number }> {
  const state = { url: '', requests: 0 };
  const server = createServer((request, response) => {
    state.requests += 1;
    request.resume();
    request.on('end', () => {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          type: 'error',
          error: { type: 'authentication_error', message: 'invalid key' },
        }),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

describe('a blank key is no key', () => {
  it.each([
    ['ANTHROPIC_API_KEY', ' '],
    ['OPENAI_API_KEY', '   '],
    ['GEMINI_API_KEY', '\n'],
  ])('%s=%j: said at start, nothing sent', async (variable, value) => {
    const server = await refusingServer();
    const run = await runCli(['-p', 'hi'], {
      cwd: await scratch(),
      env: cleanEnv({
        AGENT_HOME: await scratch(),
        [variable]: value,
        ANTHROPIC_BASE_URL: server.url,
        GOOGLE_GEMINI_BASE_URL: server.url,
      }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('No model provider configured');
    expect(run.stderr).toContain(`(${variable} is set, but blank: only spaces or line breaks.)`);
    expect(server.requests).toBe(0);
  });

  it('a blank key of the provider named: its missing-key message says it is blank', async () => {
    const run = await runCli(['--provider', 'anthropic', '-p', 'hi'], {
      cwd: await scratch(),
      env: cleanEnv({ AGENT_HOME: await scratch(), ANTHROPIC_API_KEY: '  ' }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('The provider anthropic needs an API key');
    expect(run.stderr).toContain('ANTHROPIC_API_KEY is set, but blank');
  });
});

describe('a refused key says which slip it is', () => {
  it.each([
    [
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_BASE_URL',
      '',
      '"sk-ant-api03-secretvalue"',
      'has quotes around it',
    ],
    ['OPENAI_API_KEY', 'OPENAI_BASE_URL', '/v1', "'sk-proj-secretvalue'", 'has quotes around it'],
    [
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_BASE_URL',
      '',
      'sk-proj-secretvalue',
      'looks like an OpenAI key: put it in OPENAI_API_KEY, and an Anthropic key in ANTHROPIC_API_KEY',
    ],
    [
      'OPENAI_API_KEY',
      'OPENAI_BASE_URL',
      '/v1',
      'sk-ant-api03-secretvalue',
      'looks like an Anthropic key: put it in ANTHROPIC_API_KEY, and an OpenAI key in OPENAI_API_KEY',
    ],
    [
      'OPENAI_API_KEY',
      'OPENAI_BASE_URL',
      '/v1',
      'AIzaSecretvalue',
      'looks like a Google key: put it in GEMINI_API_KEY, and an OpenAI key in OPENAI_API_KEY',
    ],
  ])('%s (base %s%s) = %s', async (variable, baseVariable, path, key, expected) => {
    const server = await refusingServer();
    const run = await runCli(['-p', 'hi'], {
      cwd: await scratch(),
      env: cleanEnv({
        AGENT_HOME: await scratch(),
        [variable]: key,
        [baseVariable]: `${server.url}${path}`,
      }),
    });
    expect(run.code).toBe(1);
    expect(server.requests).toBeGreaterThan(0);
    expect(run.stderr).toContain(`the key in ${variable} ${expected}`);
    expect(`${run.stdout}${run.stderr}`).not.toContain('secretvalue');
    expect(`${run.stdout}${run.stderr}`).not.toContain('Secretvalue');
  });

  it('a key of the right vendor is only said to be refused', async () => {
    const server = await refusingServer();
    const run = await runCli(['-p', 'hi'], {
      cwd: await scratch(),
      env: cleanEnv({
        AGENT_HOME: await scratch(),
        ANTHROPIC_API_KEY: 'sk-ant-api03-x',
        ANTHROPIC_BASE_URL: server.url,
      }),
    });
    expect(run.stderr).toContain('the key in ANTHROPIC_API_KEY was refused: check it');
    expect(run.stderr).not.toContain('looks like');
  });
});

describe('a key under a look-alike name', () => {
  const value = 'sk-look-alike-value-0123456789';
  it.each([
    ['ANTHROPIC_KEY', 'ANTHROPIC_API_KEY'],
    ['CLAUDE_API_KEY', 'ANTHROPIC_API_KEY'],
    ['anthropic_api_key', 'ANTHROPIC_API_KEY'],
    ['ANTHROPIC_API_KY', 'ANTHROPIC_API_KEY'],
    ['OPENAI_KEY', 'OPENAI_API_KEY'],
    ['GOOGLE_GENERATIVE_AI_API_KEY', 'GEMINI_API_KEY'],
    ['GEMINI_KEY', 'GEMINI_API_KEY'],
  ])('%s: named with the variable read here, its value never shown', async (variable, ours) => {
    const run = await runCli(['-p', 'hi'], {
      cwd: await scratch(),
      env: cleanEnv({ AGENT_HOME: await scratch(), [variable]: value }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('No model provider configured');
    expect(run.stderr).toContain(
      `(${variable} is set but not read here; agent reads ${ours}: export ${ours}="$${variable}".)`,
    );
    expect(run.stderr).not.toContain(value);
  });

  it('the provider named: only its look-alikes are said', async () => {
    const run = await runCli(['--provider', 'anthropic', '-p', 'hi'], {
      cwd: await scratch(),
      env: cleanEnv({ AGENT_HOME: await scratch(), CLAUDE_API_KEY: value, OPENAI_KEY: value }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('The provider anthropic needs an API key');
    expect(run.stderr).toContain('CLAUDE_API_KEY is set but not read here');
    expect(run.stderr).not.toContain('OPENAI_KEY');
  });
});
