// An HTTP MCP server on a loopback port, with its key in `headers`: any user of the machine can
// listen on that port while the user's own server is not running (or on [::1] beside it for a
// `localhost` URL), and was sent the key with the first request. Real sockets: the other user is
// `nobody` running the system's python3 as the "server" (as root only: only root can be another
// user); the user's own server is one in this process.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { nobodyUid, recordingServerAs, skipWithout } from '@agent/tooling-system-tools';
import { afterEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const key = 'sk-live-0123456789abcdefghij';

/** An HTTP server of `nobody` on `host` (it answers each request 401), ended after the test. */
async function nobodysServer(host: string) {
  const server = await recordingServerAs(nobodyUid, { host });
  cleanups.push(() => server.stop());
  return server;
}

function connect(url: string) {
  return McpToolAdapter.connect({
    name: 'local',
    transport: { type: 'http', url, headers: { 'X-Api-Key': key } },
    connectTimeoutMs: 30_000,
  });
}

describe.skipIf(process.platform !== 'linux' || process.getuid?.() !== 0)(
  "a loopback server's credentials",
  () => {
    it("are not sent to another user's process on the port", async (context) => {
      skipWithout('python3')(context);
      const theirs = await nobodysServer('127.0.0.1');
      const error = await connect(`http://127.0.0.1:${theirs.port}/mcp`).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(await theirs.received()).not.toContain(key);
      expect(String(error)).toContain(`belongs to another user (uid ${nobodyUid})`);
    });

    it('a localhost URL: not sent while another user holds [::1] (which a client may dial first) beside our 127.0.0.1', async (context) => {
      skipWithout('python3')(context);
      const theirs = await nobodysServer('::1');
      const ours: IncomingHttpHeaders[] = [];
      const server = createServer((request, response) => {
        ours.push(request.headers);
        response.writeHead(401).end();
      });
      const listening = new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(theirs.port, '127.0.0.1', () => resolve());
      });
      await listening;
      cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
      const error = await connect(`http://localhost:${theirs.port}/mcp`).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(await theirs.received()).not.toContain(key);
      expect(String(error)).toContain(`belongs to another user (uid ${nobodyUid})`);
    });

    it('without credentials, nothing is sent either: its tools would reach the model, the calls it', async (context) => {
      skipWithout('python3')(context);
      const theirs = await nobodysServer('127.0.0.1');
      const error = await McpToolAdapter.connect({
        name: 'local',
        transport: { type: 'http', url: `http://127.0.0.1:${theirs.port}/mcp` },
        connectTimeoutMs: 30_000,
      }).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(await theirs.received()).toBe('');
      expect(String(error)).toContain(`belongs to another user (uid ${nobodyUid})`);
    });

    it('are sent to a server of this user, as before', async () => {
      const ours: IncomingHttpHeaders[] = [];
      const server = createServer((request, response) => {
        ours.push(request.headers);
        response.writeHead(401).end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
      cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
      const { port } = server.address() as { port: number };
      await connect(`http://127.0.0.1:${port}/mcp`).catch(() => undefined);
      expect(ours.map((headers) => headers['x-api-key'])).toContain(key);
    });
  },
);
