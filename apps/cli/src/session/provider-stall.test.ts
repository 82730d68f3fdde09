// A provider that stops sending, met by the CLI: before the idle timeout a stalled stream hung `-p`
// forever (the SDKs' own timeouts end at the headers). Real CLI processes against a local server
// that speaks the Chat Completions wire and then goes silent.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const chunk = (delta: unknown) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;

/** A server whose answers send `before` and then nothing more; it counts the requests. */
async function stallingServer(before: string): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests++;
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(before);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, requests: () => requests };
}

async function runAgainst(url: string, env: Record<string, string>) {
  const dir = await tempDir('agent-cli-stall-');
  cleanups.push(dir.dispose);
  return runCli(['--base-url', url, '--model', 'local-model', '--cwd', dir.path, '-p', 'hello'], {
    env: cleanEnv({ AGENT_HOME: dir.path, ...env }),
  });
}

describe('a provider that goes silent (-p)', () => {
  it.each([
    ['after the headers', ''],
    ['mid-answer', chunk({ role: 'assistant', content: 'Hel' })],
  ])('%s: the run ends with the idle timeout named, not a hang', async (_when, before) => {
    const server = await stallingServer(before);
    const run = await runAgainst(server.url, { AGENT_STREAM_IDLE_TIMEOUT: '1' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/sent nothing for 1 s \(idle timeout\)/);
    expect(run.stderr).toContain('AGENT_STREAM_IDLE_TIMEOUT=<seconds> sets how long');
    // Retried only while nothing had come, and only before the retries' shared deadline (one
    // more idle timeout): 2 requests, not one per retry (3, each waiting the whole timeout).
    expect(server.requests()).toBe(before === '' ? 2 : 1);
    if (before === '') expect(run.stderr).toMatch(/2 attempts closed, [\d.]+ s in all/);
  });

  it.each(['0', '-5', 'soon', 'Infinity'])(
    'AGENT_STREAM_IDLE_TIMEOUT=%s is refused, naming the variable',
    async (value) => {
      const server = await stallingServer('');
      const run = await runAgainst(server.url, { AGENT_STREAM_IDLE_TIMEOUT: value });
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain(
        `AGENT_STREAM_IDLE_TIMEOUT takes seconds (a number > 0, e.g. 120), got "${value}"`,
      );
      expect(server.requests()).toBe(0);
    },
  );
});
