// A provider that asks the CLI to wait (429 with retry-after, 503) was retried in silence: a
// `retry-after: 20` held a run for 40 s with nothing on the screen. Each retry is now said on
// stderr as it is waited for. The built CLI as a real process against a real HTTP server on
// 127.0.0.1 that refuses first, then answers as an OpenAI-compatible server does.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  chatCompletionStream,
  cleanEnv,
  runCli,
  tempDir,
} from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Answers each request with the next of `refusals` (status, headers), then with a stream. */
async function busyServer(refusals: [number, Record<string, string>][]): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const refusal = refusals.shift();
      if (refusal !== undefined) {
        response.writeHead(refusal[0], { 'content-type': 'application/json', ...refusal[1] });
        response.end(JSON.stringify({ error: { message: `busy now (${refusal[0]})` } }));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(chatCompletionStream('answered'));
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

describe('a provider that asks to wait', () => {
  it.each([
    [
      [[429, { 'retry-after': '1' }]] as [number, Record<string, string>][],
      ['HTTP 429: ', 'busy now (429) — retrying in 1 s (retry 1)'],
    ],
    [
      [
        [503, {}],
        [500, {}],
      ] as [number, Record<string, string>][],
      ['HTTP 503: ', '— retrying in', '(retry 1)', 'HTTP 500: ', '(retry 2)'],
    ],
  ])('%j: each retry is said as it is waited for, then the answer', async (refusals, said) => {
    const home = await tempDir('agent-retry-notice-');
    cleanups.push(home.dispose);
    const url = await busyServer([...refusals]);
    const run = await runCli(['-p', 'hi', '--model', 'm'], {
      cwd: home.path,
      env: cleanEnv({
        AGENT_HOME: home.path,
        OPENAI_BASE_URL: url,
        OPENAI_API_KEY: 'sk-retry-secret',
      }),
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('answered\n');
    for (const text of said) expect(run.stderr).toContain(text);
    expect(run.stderr.match(/retrying in/g)?.length).toBe(refusals.length);
    expect(run.stderr).not.toContain('sk-retry-secret');
  });
});
