import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LoopbackOAuthProvider } from './oauth.js';
import { fileTokenStore, memoryTokenStore } from './token-store.js';

const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('token stores', () => {
  it('the file store keeps each server’s tokens in a file only its owner can read', async () => {
    const path = join(dir, 'nested', 'tokens.json');
    const store = fileTokenStore(path);
    await store.save('github', { tokens: { access_token: 'secret-a', token_type: 'Bearer' } });
    await store.save('jira', { tokens: { access_token: 'secret-b', token_type: 'Bearer' } });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const again = fileTokenStore(path);
    expect((await again.load('github'))?.tokens?.access_token).toBe('secret-a');
    expect((await again.load('jira'))?.tokens?.access_token).toBe('secret-b');
    expect(await again.load('other')).toBeUndefined();
  });
});

describe('the loopback redirect', () => {
  it('takes the code the browser brings back, checks the state, and refuses strays', async () => {
    let opened: URL | undefined;
    const provider = await LoopbackOAuthProvider.start('srv', {
      openUrl: (url) => {
        opened = url;
      },
      store: memoryTokenStore(),
    });
    try {
      expect(provider.redirectUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      expect(provider.clientMetadata.redirect_uris).toEqual([provider.redirectUrl]);
      const authorization = new URL('https://auth.example/authorize?state=abc123');
      await provider.redirectToAuthorization(authorization);
      expect(opened?.href).toBe(authorization.href);
      expect(provider.awaitingAuthorization).toBe(true);
      const good = provider.waitForCode();
      // Strays — any local process or web page can reach the port — are refused and neither
      // complete nor end the authorization: a wrong state, none, an error without the state.
      for (const query of [
        'code=evil&state=other',
        'code=evil',
        'error=access_denied&error_description=go+away',
        'error=access_denied&state=other',
      ]) {
        const stray = await fetch(`${provider.redirectUrl}?${query}`);
        expect(stray.status, query).toBe(400);
        expect(await stray.text()).toContain('does not answer');
      }
      expect(provider.awaitingAuthorization).toBe(true);
      await fetch(`${provider.redirectUrl}?code=the-code&state=abc123`);
      expect(await good).toBe('the-code');
      expect(provider.awaitingAuthorization).toBe(false);
    } finally {
      await provider.close();
    }
  });
});
