import { mkdir, readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';

// A key in the provider's base URL (`…/v1?key=…`, as gateways take it) is the user's secret: a
// server answering 404 quotes the path and query it was sent, and that answer became the error
// line on the terminal, the JSON result and the saved session — without the rest of the URL, so
// the redaction of the whole value never matched.

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const gatewayKey = 'gw-Pq7Lm3Np5Zz9Xk2Rt8';

/** A server that answers every request 404, quoting the path and query it was asked for. */
async function quotingServer(): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: `no route ${request.url}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Every file under `dir`, as text. */
async function allText(dir: string): Promise<string> {
  const names = await readdir(dir, { recursive: true, withFileTypes: true });
  const texts = await Promise.all(
    names
      .filter((entry) => entry.isFile())
      .map((entry) => readFile(join(entry.parentPath, entry.name), 'utf8').catch(() => '')),
  );
  return texts.join('\n');
}

describe('a key in the base URL of an OpenAI-compatible server', () => {
  it.each([
    ['--base-url', 'text'],
    ['--base-url', 'json'],
    ['OPENAI_BASE_URL', 'text'],
    ['OPENAI_BASE_URL', 'json'],
  ])(
    'given as %s (output %s): not on the terminal, in the output or the session files',
    async (how, format) => {
      const dir = await tempDir('agent-cli-base-url-secrets-');
      cleanups.push(dir.dispose);
      const workspace = join(dir.path, 'ws');
      const home = join(dir.path, 'home');
      await mkdir(workspace);
      await mkdir(home);
      const baseUrl = `${await quotingServer()}/v1?api-version=2024-10-21&key=${gatewayKey}`;
      const run = await runCli(
        [
          '-p',
          'go',
          '--model',
          'gateway-model',
          '--cwd',
          workspace,
          '--output-format',
          format,
          '--save',
          join(home, 'saved.json'),
          ...(how === '--base-url' ? ['--base-url', baseUrl] : []),
        ],
        {
          env: cleanEnv({
            AGENT_HOME: home,
            OPENAI_API_KEY: `sk-proj-${'Ab3'.repeat(16)}`,
            ...(how === 'OPENAI_BASE_URL' ? { OPENAI_BASE_URL: baseUrl } : {}),
          }),
        },
      );
      expect(run.code).toBe(1);
      // The server was reached and its answer shown, with the ordinary query values kept.
      const shown = format === 'json' ? run.stdout : run.stderr;
      expect(shown).toContain(
        'no route /v1/chat/completions?api-version=2024-10-21&key=[redacted:',
      );
      expect(run.stderr).not.toContain(gatewayKey);
      expect(run.stdout).not.toContain(gatewayKey);
      // The start took the key off the command line every user reads (credential-handover.test.ts
      // reads it): nothing to warn about.
      expect(run.stderr).not.toContain('--base-url holds a key');
      const files = await allText(home);
      expect(files).toContain('no route /v1/chat/completions');
      expect(files).not.toContain(gatewayKey);
    },
  );
});
