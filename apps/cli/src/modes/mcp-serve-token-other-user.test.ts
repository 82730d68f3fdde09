// `agent mcp serve --http --token-file f --port P`: a fixed token on a fixed port. While the
// server is down, another user of the machine can listen on P and collect the token from a client
// that keeps retrying (or read it wherever it leaked); with it their processes could call the
// tools as the user once the server was back. Now only the user's own processes (and root's) are
// served on Linux, token or not, and a port another user holds is named at start. Real CLI; the
// other user is `nobody` running the system's curl and python3 (as root only).
import { writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { curlAs, nobodyUid, recordingServerAs, skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ServeProcess, startHttpServe } from '../testing/mcp-serve-support.js';
import { assertBuilt, runCli, tempDir } from '../testing/test-support.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeAll(() => assertBuilt());

const token = `${'t'.repeat(24)}-fixed-token-of-the-user-0123456789`;

async function workspaceWithToken(): Promise<{ cwd: string; tokenFile: string }> {
  const dir = await tempDir('agent-mcp-serve-token-');
  cleanups.push(dir.dispose);
  const tokenFile = join(dir.path, 'token');
  await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
  await writeFile(join(dir.path, 'notes.txt'), 'the user notes\n');
  return { cwd: dir.path, tokenFile };
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** A tools/call of read_file as `nobody` with the token. */
function readAsNobody(url: string) {
  const call = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'read_file', arguments: { path: 'notes.txt' } },
  };
  return curlAs(url, [
    '-H',
    'content-type: application/json',
    '-H',
    'accept: application/json, text/event-stream',
    '-H',
    `authorization: Bearer ${token}`,
    '--data',
    JSON.stringify(call),
  ]);
}

describe.skipIf(process.platform !== 'linux' || process.getuid?.() !== 0)(
  'agent mcp serve --http with a fixed token and port',
  () => {
    beforeEach(skipWithout('curl'));

    it("another user's process with the token gets 403; the user's own is served", async () => {
      const { cwd, tokenFile } = await workspaceWithToken();
      const port = await freePort();
      const server: ServeProcess = await startHttpServe([
        '--cwd',
        cwd,
        '--token-file',
        tokenFile,
        '--port',
        String(port),
      ]);
      cleanups.push(server.stop);
      const theirs = await readAsNobody(server.url);
      expect(theirs.status).toBe(403);
      expect(theirs.body).toContain('serves only the processes of the user who started it');
      expect(theirs.body).not.toContain('the user notes');
      const ours = await fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      expect(ours.status).toBe(200);
    });

    it('a port another user holds is refused at start, naming them and what they may have', async (context) => {
      skipWithout('python3')(context);
      const { cwd, tokenFile } = await workspaceWithToken();
      const squatter = await recordingServerAs(nobodyUid);
      cleanups.push(() => squatter.stop());
      const run = await runCli([
        'mcp',
        'serve',
        '--http',
        '--cwd',
        cwd,
        '--token-file',
        tokenFile,
        '--port',
        String(squatter.port),
      ]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `Cannot listen on 127.0.0.1:${squatter.port}: another process listens there — a process of another user of this machine (uid 65534); a client that tried this port while the server was down may have sent it the token: use another port and a new token`,
      );
    });
  },
);
