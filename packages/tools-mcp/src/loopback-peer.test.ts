// Whose process is at the other end of a loopback connection (Linux's socket tables), and the
// OAuth redirect listener refusing another user's: the authorization URL, state included, is on
// the browser's command line for every user of the machine to read, and one who signed in with it
// as themselves handed the client a code of their own account. Real sockets on 127.0.0.1; the
// other user is `nobody` running the system's curl (as root only: only root can be another user).
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { loopbackPeer } from '@agent/core/loopback';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, describe, expect, it } from 'vitest';
import { LoopbackOAuthProvider } from './oauth.js';
import { curlAsNobody, nobody } from './test-helpers.js';
import { memoryTokenStore } from './token-store.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const linux = process.platform === 'linux';
const root = process.getuid?.() === 0;

/** A server on 127.0.0.1 that hands over each connection it accepts. */
async function listener() {
  const accepted: Socket[] = [];
  let onAccept: (socket: Socket) => void = () => undefined;
  // Half-open kept: a peer that closes leaves our end open, and listed, until the test ends it.
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    accepted.push(socket);
    onAccept(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => {
    for (const socket of accepted) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const next = () => new Promise<Socket>((resolve) => (onAccept = resolve));
  return { port, next };
}

describe.skipIf(!linux)('loopbackPeer', () => {
  it("names this user for this process's connection, and none once the peer closed it", async () => {
    const { port, next } = await listener();
    const accepted = next();
    const client = connect(port, '127.0.0.1');
    cleanups.push(() => void client.destroy());
    const server = await accepted;
    expect(loopbackPeer(server)).toEqual({ uid: process.getuid?.() });
    const ended = once(server, 'end');
    client.destroy();
    await ended;
    // The peer's socket is closed (orphaned, or in TIME_WAIT): no process holds it, no owner named.
    expect(loopbackPeer(server)).toBe('gone');
  });

  it.skipIf(!root)("names another user for that user's connection", async (context) => {
    skipWithout('curl')(context);
    const { port, next } = await listener();
    const accepted = next();
    const request = curlAsNobody(`http://127.0.0.1:${port}/`);
    const server = await accepted;
    expect(loopbackPeer(server)).toEqual({ uid: nobody });
    server.end('HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n');
    await request;
  });
});

describe.skipIf(!linux || !root)('the OAuth redirect listener', () => {
  it("refuses another user's redirect, even with the right state; the user's own completes", async (context) => {
    skipWithout('curl')(context);
    const provider = await LoopbackOAuthProvider.start('srv', {
      openUrl: () => undefined,
      store: memoryTokenStore(),
    });
    cleanups.push(() => provider.close());
    // What the browser's command line shows every user of the machine.
    await provider.redirectToAuthorization(
      new URL('https://auth.example/authorize?state=the-state-of-this-authorization'),
    );
    const code = provider.waitForCode();
    const foreign = await curlAsNobody(
      `${provider.redirectUrl}?code=code-of-their-account&state=the-state-of-this-authorization`,
    );
    expect(foreign.status).toBe(403);
    expect(foreign.body).toContain('belongs to another user of this machine');
    expect(provider.awaitingAuthorization).toBe(true);
    const own = await fetch(
      `${provider.redirectUrl}?code=the-users-code&state=the-state-of-this-authorization`,
    );
    expect(own.status).toBe(200);
    expect(await code).toBe('the-users-code');
  });
});
