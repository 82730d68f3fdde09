// A model id typed with a slip (`claude-sonet-4-6`) went to the vendor and came back as a 404
// after the first prompt. Now it is said at start, with the id meant, and still sent as given (a
// model newer than the table is not refused). The built CLI as a real process against a real
// HTTP server on 127.0.0.1 that answers 404 as the vendors do for a model they do not have.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, cliPath, runCli, tempDir } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function scratch(): Promise<string> {
  const dir = await tempDir('agent-model-typo-');
  cleanups.push(dir.dispose);
  return dir.path;
}

async function modelNotFoundServer(): Promise<{ url: string; models: string[] }> {
  const models: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const model =
        /"model":"([^"]+)"/.exec(body)?.[1] ?? /models\/([^:/]+)/.exec(request.url ?? '')?.[1];
      models.push(model ?? '');
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          type: 'error',
          error: { type: 'not_found_error', message: `model: ${model}` },
        }),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, models };
}

describe('a model id with a slip', () => {
  it.each([
    [
      'claude-sonet-4-6',
      'anthropic',
      'claude-sonnet-4-6',
      { ANTHROPIC_API_KEY: 'sk-ant-x' },
      'ANTHROPIC_BASE_URL',
    ],
    [
      'gemini-2.5-flsh',
      'google',
      'gemini-2.5-flash',
      { GEMINI_API_KEY: 'x' },
      'GOOGLE_GEMINI_BASE_URL',
    ],
  ])(
    '%s: said at start with the one meant (%s: %s), and still sent as given',
    async (typed, provider, meant, key, baseVariable) => {
      const server = await modelNotFoundServer();
      const run = await runCli(['--model', typed, '-p', 'hi'], {
        cwd: await scratch(),
        env: cleanEnv({ AGENT_HOME: await scratch(), ...key, [baseVariable]: server.url }),
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `note: ${provider} has no model "${typed}" that agent knows; did you mean ${meant}? (sent as given; --model ${meant} for that one)`,
      );
      expect(server.models[0]).toBe(typed);
    },
  );

  it.each(['claude-sonnet-4-6', 'claude-sonnet-4-5-20250929', 'my-fine-tune'])(
    '%s (known, dated, or near none): no note',
    async (model) => {
      const server = await modelNotFoundServer();
      const run = await runCli(['--model', model, '-p', 'hi', '--provider', 'anthropic'], {
        cwd: await scratch(),
        env: cleanEnv({
          AGENT_HOME: await scratch(),
          ANTHROPIC_API_KEY: 'sk-ant-x',
          ANTHROPIC_BASE_URL: server.url,
        }),
      });
      expect(run.stderr).not.toContain('that agent knows');
    },
  );

  it("OpenAI's own models (offline, so nothing leaves the machine); a server of yours is not second-guessed", async (context) => {
    skipWithout('bwrap')(context);
    const offline = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        'bwrap',
        [
          '--dev-bind',
          '/',
          '/',
          '--unshare-net',
          process.execPath,
          cliPath,
          '--model',
          'gpt-5-mni',
          '-p',
          'hi',
          '--sandbox',
          'off',
        ],
        { env: cleanEnv({ OPENAI_API_KEY: 'sk-x' }), stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      child.on('error', reject);
      child.on('close', () => resolve(stderr));
    });
    expect(offline).toContain(
      'note: openai has no model "gpt-5-mni" that agent knows; did you mean gpt-5-mini?',
    );
    const server = await modelNotFoundServer();
    const own = await runCli(
      ['--model', 'gpt-5-mni', '-p', 'hi', '--base-url', `${server.url}/v1`],
      {
        cwd: await scratch(),
        env: cleanEnv({ AGENT_HOME: await scratch() }),
      },
    );
    expect(own.stderr).not.toContain('that agent knows');
  });
});
