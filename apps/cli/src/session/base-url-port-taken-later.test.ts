// A provider's base URL on a loopback port whose server stops mid-session (a LiteLLM proxy that
// crashed, Ollama restarted): any user of the machine can take the port then, and the next prompt
// sent the key and the whole conversation to them — the port was checked at start only. Real CLI
// fed stream-json messages; the user's server is one in this process, the other user `nobody`
// running the system's python3 (as root only: only root can be another user).
import { spawn } from 'node:child_process';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nobodyUid, recordingServerAs, skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  appDir,
  assertBuilt,
  chatCompletionStream,
  cleanEnv,
  cliPath,
} from '../testing/test-support.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeAll(() => assertBuilt());

const key = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD';

/**
 * The user's own server on 127.0.0.1: one streamed OpenAI-compatible answer per request; a 400
 * to anything else (the Anthropic client's `/v1/messages`: that run ends, the session goes on).
 */
async function ownServer() {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    seen.push(request.headers);
    request.resume();
    request.on('end', () => {
      if (!request.url?.endsWith('/chat/completions')) {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end('{"type":"error","error":{"type":"invalid_request_error","message":"no"}}');
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(chatCompletionStream('noted'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  cleanups.push(() => (server.listening ? stop() : undefined));
  return { port: (server.address() as AddressInfo).port, seen, stop };
}

const user = (text: string) =>
  `${JSON.stringify({ type: 'user', message: { role: 'user', content: text } })}\n`;

describe.skipIf(process.platform !== 'linux' || process.getuid?.() !== 0)(
  "a base URL's port taken by another user after the start",
  () => {
    beforeEach(skipWithout('python3'));

    it.each([
      ['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'authorization', `Bearer ${key}`, 'local-model'],
      [
        'ANTHROPIC_BASE_URL',
        'ANTHROPIC_API_KEY',
        'authorization',
        `Bearer ${key}`,
        'claude-sonnet-4-6',
      ],
      ['GOOGLE_GEMINI_BASE_URL', 'GEMINI_API_KEY', 'x-goog-api-key', key, 'gemini-2.5-flash'],
    ])(
      '%s: the next request is not sent to them; the run fails naming the user',
      async (baseVariable, keyVariable, header, sent, model) => {
        const ours = await ownServer();
        const child = spawn(
          process.execPath,
          [
            cliPath,
            '--input-format',
            'stream-json',
            '--output-format',
            'stream-json',
            '--cwd',
            appDir,
            '--model',
            model,
          ],
          {
            env: cleanEnv({
              [keyVariable]: key,
              [baseVariable]: `http://127.0.0.1:${ours.port}${baseVariable === 'OPENAI_BASE_URL' ? '/v1' : ''}`,
            }),
            stdio: ['pipe', 'pipe', 'pipe'],
          },
        );
        cleanups.push(() => void child.kill());
        let stdout = '';
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
          stderr += chunk;
        });
        let onLine: () => void = () => undefined;
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
          onLine();
        });
        const runEnds = (count: number) =>
          new Promise<void>((resolve) => {
            onLine = () => {
              if (stdout.split('\n').filter((line) => line.includes('"run-end"')).length >= count)
                resolve();
            };
            onLine();
          });
        const exited = new Promise<number | null>((resolve) => child.on('close', resolve));

        child.stdin.write(user('remember: the launch is on Friday'));
        await runEnds(1);
        expect(ours.seen.map((headers) => headers[header])).toEqual([sent]);
        // The user's server stops; nobody takes its port.
        await ours.stop();
        const theirs = await recordingServerAs(nobodyUid, { port: ours.port });
        cleanups.push(() => theirs.stop());

        child.stdin.end(user('and the budget is 2 million'));
        await runEnds(2);
        expect(await exited).not.toBe(0);
        expect(await theirs.received()).toBe('');
        expect(`${stdout}${stderr}`).toContain(
          `${baseVariable} points at 127.0.0.1:${ours.port}, where a process of another user of this machine (uid 65534, nobody) listens, not yours`,
        );
      },
    );
  },
);
