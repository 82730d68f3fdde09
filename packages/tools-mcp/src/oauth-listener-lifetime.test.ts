// The OAuth client's loopback redirect listener is open only while a sign-in waits for the
// browser: it was started with every HTTP MCP server that has OAuth configured and stayed open for
// the whole session, signed in or not — a port on 127.0.0.1 any user or web page could reach for
// hours. Real sockets on 127.0.0.1.
import { once } from 'node:events';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LoopbackOAuthProvider } from './oauth.js';
import { memoryTokenStore } from './token-store.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Whether something accepts a connection on 127.0.0.1:`port` now. */
async function listening(port: number): Promise<boolean> {
  const socket = connect(port, '127.0.0.1');
  try {
    await once(socket, 'connect');
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ECONNREFUSED') return false;
    throw error;
  } finally {
    socket.destroy();
  }
}

async function provider(options: { timeoutMs?: number; openUrl?: (url: URL) => void } = {}) {
  const started = await LoopbackOAuthProvider.start('srv', {
    openUrl: () => undefined,
    store: memoryTokenStore(),
    ...options,
  });
  cleanups.push(() => started.close());
  const port = Number(new URL(started.redirectUrl).port);
  return { provider: started, port };
}

const authorization = (state: string) =>
  new URL(`https://auth.example/authorize?state=${state}&redirect_uri=x`);

describe('the OAuth redirect listener', () => {
  it('is not open before a sign-in is asked for', async () => {
    const { port } = await provider();
    expect(port).toBeGreaterThan(0);
    expect(await listening(port)).toBe(false);
  });

  it('opens when the sign-in starts and closes once the browser came back', async () => {
    const { provider: oauth, port } = await provider();
    await oauth.redirectToAuthorization(authorization('first'));
    expect(await listening(port)).toBe(true);
    const code = oauth.waitForCode();
    const back = await fetch(`${oauth.redirectUrl}?code=the-code&state=first`);
    expect(back.status).toBe(200);
    expect(await code).toBe('the-code');
    expect(await listening(port)).toBe(false);
  });

  it('closes when nobody signed in within the timeout', async () => {
    const { provider: oauth, port } = await provider({ timeoutMs: 50 });
    await oauth.redirectToAuthorization(authorization('late'));
    expect(await listening(port)).toBe(true);
    await expect(oauth.waitForCode()).rejects.toThrow('nobody authorised');
    expect(await listening(port)).toBe(false);
    // The browser coming back now finds nothing there.
    await expect(fetch(`${oauth.redirectUrl}?code=c&state=late`)).rejects.toThrow();
  });

  it('closes when the sign-in could not be shown', async () => {
    const { provider: oauth, port } = await provider({
      openUrl: () => {
        throw new Error('nobody is here to sign in');
      },
    });
    await expect(oauth.redirectToAuthorization(authorization('shown'))).rejects.toThrow(
      'nobody is here',
    );
    await expect(oauth.waitForCode()).rejects.toThrow('nobody is here');
    expect(await listening(port)).toBe(false);
  });

  it('opens again on the same port for a later sign-in (a wider scope), and a replaced one keeps it open', async () => {
    const { provider: oauth, port } = await provider();
    await oauth.redirectToAuthorization(authorization('one'));
    const first = oauth.waitForCode();
    await fetch(`${oauth.redirectUrl}?code=code-one&state=one`);
    expect(await first).toBe('code-one');
    expect(await listening(port)).toBe(false);

    await oauth.redirectToAuthorization(authorization('two'));
    const replaced = oauth.waitForCode();
    await oauth.redirectToAuthorization(authorization('three'));
    await expect(replaced).rejects.toThrow('a newer authorization replaced this one');
    expect(await listening(port)).toBe(true);
    const third = oauth.waitForCode();
    const back = await fetch(`${oauth.redirectUrl}?code=code-three&state=three`);
    expect(back.status).toBe(200);
    expect(await third).toBe('code-three');
    expect(await listening(port)).toBe(false);
  });
});
