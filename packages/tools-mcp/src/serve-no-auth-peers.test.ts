// serveHttp without a token (`auth: 'none'`, agent mcp serve --http --no-auth): the port was the
// only guard, and every user of the machine could call the tools as the user who started it. With
// a token (agent mcp serve --http, --token-file), the token was all it took from any user — and
// it is a file, a client's config or a retrying client away from another local user: with a fixed
// port (--port), one who listens there while the server is down collects it from a client that
// keeps retrying. On Linux only that user's processes (and root's) are served now, token or not.
// Real server on 127.0.0.1; the other user is `nobody` running the system's curl (as root only).
import { defineTool } from '@agent/core';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { serveHttp } from './serve-http.js';
import { curlAsNobody } from './test-helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const calls: string[] = [];
const echo = defineTool({
  name: 'echo',
  description: 'Echoes the text.',
  input: z.object({ text: z.string() }),
  policy: { permission: 'read-only' },
  execute: async ({ text }) => {
    calls.push(text);
    return text;
  },
});

const call = (text: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'echo', arguments: { text } },
  });
const headers = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

describe.skipIf(process.platform !== 'linux' || process.getuid?.() !== 0)(
  "serveHttp with auth: 'none'",
  () => {
    it("refuses another user's process; the user's own are served", async (context) => {
      skipWithout('curl')(context);
      const server = await serveHttp({ tools: [echo], auth: 'none' });
      closers.push(server.close);
      for (const url of [server.url, server.url.replace('127.0.0.1', '[::1]')]) {
        const theirs = await curlAsNobody(url, [
          '-X',
          'POST',
          ...Object.entries(headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]),
          '--data',
          call('from nobody'),
        ]);
        expect(theirs.status, url).toBe(403);
        expect(theirs.body).toContain('serves only the processes of the user who started it');
      }
      expect(calls).not.toContain('from nobody');
      const ours = await fetch(server.url, { method: 'POST', headers, body: call('from us') });
      expect(ours.status).toBe(200);
      expect(await ours.text()).toContain('from us');
    });
  },
);

const token = 'a-token-that-leaked-to-another-user-0123456789';
const withToken = { ...headers, authorization: `Bearer ${token}` };
const curlArgs = (text: string) => [
  '-X',
  'POST',
  ...Object.entries(withToken).flatMap(([name, value]) => ['-H', `${name}: ${value}`]),
  '--data',
  call(text),
];

describe.skipIf(process.platform !== 'linux' || process.getuid?.() !== 0)(
  'serveHttp with a token another user has',
  () => {
    it("refuses their process; the user's own are served", async (context) => {
      skipWithout('curl')(context);
      const server = await serveHttp({ tools: [echo], auth: { token } });
      closers.push(server.close);
      const theirs = await curlAsNobody(server.url, curlArgs('from nobody'));
      expect(theirs.status).toBe(403);
      expect(theirs.body).toContain('serves only the processes of the user who started it');
      expect(calls).not.toContain('from nobody');
      const ours = await fetch(server.url, {
        method: 'POST',
        headers: withToken,
        body: call('from us'),
      });
      expect(ours.status).toBe(200);
      expect(await ours.text()).toContain('from us');
    });

    it('otherUsers: true serves them with the token, as before', async (context) => {
      skipWithout('curl')(context);
      const server = await serveHttp({ tools: [echo], auth: { token }, otherUsers: true });
      closers.push(server.close);
      const theirs = await curlAsNobody(server.url, curlArgs('shared on purpose'));
      expect(theirs.status).toBe(200);
      expect(calls).toContain('shared on purpose');
    });

    it('without the token they get 401 as anyone does (the token is checked first)', async (context) => {
      skipWithout('curl')(context);
      const server = await serveHttp({ tools: [echo], auth: { token } });
      closers.push(server.close);
      const theirs = await curlAsNobody(server.url, [
        '-X',
        'POST',
        '-H',
        'content-type: application/json',
        '--data',
        call('no token'),
      ]);
      expect(theirs.status).toBe(401);
    });
  },
);
