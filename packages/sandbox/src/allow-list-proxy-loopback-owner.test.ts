// A host of this machine allowed by name in the sandbox's network (`localhost` for a local
// registry on port 4873, a dev server): while the user's service there is not running, any user of
// the machine can listen on its port, and the proxy — outside the sandbox — connected sandboxed
// commands to it: an `npm publish` handed them the token. Real proxy (its Unix socket, TCP); the
// other user is `nobody` running the system's python3 (as root only: only root can be another user).
import * as net from 'node:net';
import { nobodyUid, recordingServerAs, skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startAllowListProxy } from './allow-list-proxy.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const token = 'npm_0123456789abcdefghijklmnopqrstuvwxyz';

/** What the proxy at `socketPath` answers `request`, up to the connection's end. */
function ask(socketPath: string, request: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
    });
    socket.on('close', () => resolve(answer));
    socket.on('error', () => resolve(answer));
    socket.write(request);
  });
}

describe.skipIf(process.platform !== 'linux' || process.getuid?.() !== 0)(
  "an allowed host of this machine whose port another user's process holds",
  () => {
    beforeEach(skipWithout('python3'));

    it.each(['localhost', '127.0.0.1'])(
      '%s: refused through CONNECT and absolute-form HTTP; nothing reaches them',
      async (host) => {
        const theirs = await recordingServerAs(nobodyUid);
        cleanups.push(() => theirs.stop());
        const proxy = await startAllowListProxy([host]);
        cleanups.push(() => proxy.close());
        const target = `${host}:${theirs.port}`;
        for (const request of [
          `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\nPUT /pkg HTTP/1.1\r\nHost: ${target}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
          `PUT http://${target}/pkg HTTP/1.1\r\nHost: ${target}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
        ]) {
          const answer = await ask(proxy.socketPath, request);
          expect(answer).toMatch(/^HTTP\/1\.1 403 Forbidden/);
          expect(answer).toContain(
            `Blocked by the sandbox proxy: ${target} is served on this machine by a process of another user (uid ${nobodyUid}), not yours`,
          );
        }
        expect(await theirs.received()).toBe('');
      },
    );

    it("a system account's service (uid < 1000) is reached as before", async () => {
      const service = await recordingServerAs(1);
      cleanups.push(() => service.stop());
      const proxy = await startAllowListProxy(['127.0.0.1']);
      cleanups.push(() => proxy.close());
      const target = `127.0.0.1:${service.port}`;
      const answer = await ask(
        proxy.socketPath,
        `GET http://${target}/ HTTP/1.1\r\nHost: ${target}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
      );
      expect(answer).toMatch(/^HTTP\/1\.[01] 401/);
      expect(await service.received()).toContain(token);
    });
  },
);
