// Models and variables as people set them for other tools: `--model anthropic/claude-…` (LiteLLM,
// OpenRouter, opencode), Claude Code's `sonnet`, `OPENAI_API_BASE`, `ANTHROPIC_AUTH_TOKEN`,
// `AZURE_OPENAI_*`. Before, `gemini/gemini-2.5-flash` went as typed to Anthropic (the first key
// set) and came back a 404, `sonnet` likewise, and a base URL or key under another tool's name was
// passed over in silence. The built CLI as a real process against HTTP servers on 127.0.0.1 that
// record the model asked for and answer 404 as the vendors do.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicModels } from '@agent/providers-anthropic';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, cliPath, runCli, tempDir } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function scratch(): Promise<string> {
  const dir = await tempDir('agent-model-names-');
  cleanups.push(dir.dispose);
  return dir.path;
}

/** A server that keeps the model of each request (body or Gemini's URL) and answers 404. */
async function recordingServer(): Promise<{ url: string; models: string[] }> {
  const models: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const model =
        /"model":"([^"]+)"/.exec(body)?.[1] ?? /models\/([^:]+):/.exec(request.url ?? '')?.[1];
      models.push(decodeURIComponent(model ?? ''));
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: `model: ${model}`, code: 404 } }));
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, models };
}

describe('a model named as other tools name it', () => {
  it.each([
    ['anthropic/claude-sonnet-4-6', 'anthropic', 'claude-sonnet-4-6'],
    ['gemini/gemini-2.5-flash', 'google', 'gemini-2.5-flash'],
    ['google/gemini-2.5-pro', 'google', 'gemini-2.5-pro'],
  ])('%s goes to %s as %s, said at start', async (typed, provider, sent) => {
    const anthropic = await recordingServer();
    const google = await recordingServer();
    // Both keys set: before, the first (Anthropic's) got every model it could not place.
    const run = await runCli(['--model', typed, '-p', 'hi'], {
      cwd: await scratch(),
      env: cleanEnv({
        AGENT_HOME: await scratch(),
        ANTHROPIC_API_KEY: 'sk-ant-x',
        GEMINI_API_KEY: 'x',
        ANTHROPIC_BASE_URL: anthropic.url,
        GOOGLE_GEMINI_BASE_URL: google.url,
      }),
    });
    expect(run.stderr).toContain(
      `note: --model ${typed} is read as --provider ${provider} --model ${sent}`,
    );
    const server = provider === 'anthropic' ? anthropic : google;
    const other = provider === 'anthropic' ? google : anthropic;
    expect(server.models[0]).toBe(sent);
    expect(other.models).toEqual([]);
  });

  it("on a server of yours (OpenRouter, LiteLLM) `vendor/model` is that server's name: sent as typed", async () => {
    const own = await recordingServer();
    const run = await runCli(['--model', 'anthropic/claude-sonnet-4.5', '-p', 'hi'], {
      cwd: await scratch(),
      env: cleanEnv({
        AGENT_HOME: await scratch(),
        OPENAI_API_KEY: 'sk-or-x',
        OPENAI_BASE_URL: `${own.url}/v1`,
      }),
    });
    expect(run.stderr).not.toContain('is read as');
    expect(own.models[0]).toBe('anthropic/claude-sonnet-4.5');
  });

  it('a vendor without its key is said at start, naming the variable', async () => {
    const run = await runCli(['--model', 'anthropic/claude-sonnet-4-6', '-p', 'hi'], {
      cwd: await scratch(),
      env: cleanEnv({ AGENT_HOME: await scratch(), GEMINI_API_KEY: 'x' }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('The provider anthropic needs an API key: set ANTHROPIC_API_KEY');
  });

  it.each(['sonnet', 'opus', 'haiku', 'Sonnet'])(
    "Claude Code's alias %s is the newest model of its family",
    async (alias) => {
      const newest = anthropicModels.find((entry) =>
        entry.id.startsWith(`claude-${alias.toLowerCase()}-`),
      )?.id;
      expect(newest).toBeDefined();
      const anthropic = await recordingServer();
      const google = await recordingServer();
      const run = await runCli(['--model', alias, '-p', 'hi'], {
        cwd: await scratch(),
        env: cleanEnv({
          AGENT_HOME: await scratch(),
          // Gemini's key first in no order: the alias alone must choose Anthropic.
          GEMINI_API_KEY: 'x',
          ANTHROPIC_API_KEY: 'sk-ant-x',
          ANTHROPIC_BASE_URL: anthropic.url,
          GOOGLE_GEMINI_BASE_URL: google.url,
        }),
      });
      expect(run.stderr).toContain(`note: --model ${alias} is read as ${newest}`);
      expect(anthropic.models[0]).toBe(newest);
      expect(google.models).toEqual([]);
    },
  );
});

describe("another tool's variable for a key or base URL", () => {
  it('with no key of ours: the error names each and what agent reads instead', async () => {
    const run = await runCli(['-p', 'hi'], {
      cwd: await scratch(),
      env: cleanEnv({
        AGENT_HOME: await scratch(),
        ANTHROPIC_AUTH_TOKEN: 'sk-ant-gateway',
        OPENAI_API_BASE: 'http://127.0.0.1:11434/v1',
        AZURE_OPENAI_API_KEY: 'azure-key',
        AZURE_OPENAI_ENDPOINT: 'https://mine.openai.azure.com',
      }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('No model provider configured');
    for (const line of [
      "(ANTHROPIC_AUTH_TOKEN is set (Claude Code's bearer token for a gateway) but not read here; agent reads ANTHROPIC_API_KEY",
      '(OPENAI_API_BASE is set (older OpenAI SDKs and LangChain) but not read here; agent reads OPENAI_BASE_URL: export OPENAI_BASE_URL="$OPENAI_API_BASE"',
      "(AZURE_OPENAI_API_KEY is set (Azure OpenAI's SDKs) but not read here; agent reads OPENAI_API_KEY; an Azure resource speaks the OpenAI API at its v1 endpoint",
      "(AZURE_OPENAI_ENDPOINT is set (Azure OpenAI's SDKs) but not read here",
    ])
      expect(run.stderr).toContain(line);
    expect(run.stderr).not.toContain('sk-ant-gateway');
  });

  it('ours set too: nothing said (the user has done it)', async () => {
    const own = await recordingServer();
    const run = await runCli(['-p', 'hi', '--model', 'llama3'], {
      cwd: await scratch(),
      env: cleanEnv({
        AGENT_HOME: await scratch(),
        OPENAI_API_BASE: `${own.url}/v1`,
        OPENAI_BASE_URL: `${own.url}/v1`,
        ANTHROPIC_AUTH_TOKEN: 'x',
        ANTHROPIC_API_KEY: 'sk-ant-x',
      }),
    });
    expect(run.stderr).not.toContain('not read here');
  });

  it('OPENAI_API_BASE beside an OpenAI key: said at start that the run goes to OpenAI (offline)', async (context) => {
    skipWithout('bwrap')(context);
    // No network in this process: the request to api.openai.com cannot leave the machine.
    const stderr = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        'bwrap',
        ['--dev-bind', '/', '/', '--unshare-net', process.execPath, cliPath, '-p', 'hi'],
        {
          env: cleanEnv({ OPENAI_API_KEY: 'sk-x', OPENAI_API_BASE: 'http://localhost:11434/v1' }),
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let text = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      child.on('error', reject);
      child.on('close', () => resolve(text));
    });
    expect(stderr).toContain(
      'note: OPENAI_API_BASE is set (older OpenAI SDKs and LangChain) but not read here; agent reads OPENAI_BASE_URL: export OPENAI_BASE_URL="$OPENAI_API_BASE"',
    );
  });
});
