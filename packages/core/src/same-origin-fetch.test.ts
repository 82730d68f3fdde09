import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderError } from './errors.js';
import { sameOriginFetch } from './same-origin-fetch.js';

// Real servers on 127.0.0.1: what each one received, and where a redirect sent the client.
interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
  );
});

async function serve(
  answer: (request: Received, index: number) => { status: number; location?: string },
): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const entry = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body,
      };
      received.push(entry);
      const { status, location } = answer(entry, received.length - 1);
      response.writeHead(status, location === undefined ? {} : { location });
      response.end(status === 200 ? 'ok' : '');
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

const guarded = sameOriginFetch(globalThis.fetch, { provider: 'test' });
const post = { method: 'POST', body: '{"q":1}', headers: { 'x-goog-api-key': 'k-123' } };

describe('sameOriginFetch', () => {
  it('a 303 (and a 302 after a POST) within the origin becomes a GET without a body, the headers kept', async () => {
    for (const status of [303, 302, 301]) {
      const api = await serve((_request, index) =>
        index === 0 ? { status, location: '/moved' } : { status: 200 },
      );
      const response = await guarded(`${api.url}/v1`, post);
      expect(await response.text()).toBe('ok');
      expect(api.received.map((entry) => [entry.method, entry.url, entry.body])).toEqual([
        ['POST', '/v1', '{"q":1}'],
        ['GET', '/moved', ''],
      ]);
      expect(api.received[1]?.headers['x-goog-api-key']).toBe('k-123');
    }
  });

  it('a header key never reaches another origin, whatever the status', async () => {
    for (const status of [301, 302, 303, 307, 308]) {
      const elsewhere = await serve(() => ({ status: 200 }));
      const api = await serve(() => ({ status, location: `${elsewhere.url}/x` }));
      const refused = await guarded(`${api.url}/v1`, post).catch((error: unknown) => error);
      expect(ProviderError.isInstance(refused)).toBe(true);
      expect((refused as ProviderError).statusCode).toBe(status);
      expect((refused as ProviderError).isRetryable).toBe(false);
      expect(String(refused)).toContain(`to ${elsewhere.url}, which is not followed`);
      expect(elsewhere.received).toHaveLength(0);
    }
  });

  it('a Request whose answer redirects, even within the origin, is refused (its body is spent)', async () => {
    const api = await serve(() => ({ status: 307, location: '/again' }));
    const refused = await guarded(new Request(`${api.url}/v1`, post)).catch(
      (error: unknown) => error,
    );
    expect(String(refused)).toContain('redirected more than 0 times');
    expect(api.received).toHaveLength(1);
  });

  it('a Location that is no URL is refused, and an answer that is no redirect passes as it is', async () => {
    const broken = await serve(() => ({ status: 307, location: 'http://[::1' }));
    expect(String(await guarded(broken.url, post).catch((error: unknown) => error))).toContain(
      'a Location that is no URL',
    );
    const plain = await serve(() => ({ status: 304 }));
    expect((await guarded(plain.url)).status).toBe(304);
  });
});
