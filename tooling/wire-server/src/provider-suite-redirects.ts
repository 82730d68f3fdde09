// The provider suite's redirect cases (see provider-suite.ts): the API key goes to the base URL's
// origin only. fetch drops `Authorization` on a redirect to another origin but keeps every other
// header (Gemini's `x-goog-api-key`, a gateway's `x-api-key`) and a 307's body, so a provider that
// let fetch follow sent its key wherever a `Location` pointed. Imports vitest: for test files only.
import { describe, expect, it } from 'vitest';
import { type RecordedRequest, startWireServer, type WireResponse } from './index.js';
import type { ProviderWireProfile } from './provider-suite.js';
import type { FailureContext } from './provider-suite-failures.js';

const key = 'key-REDIRECTED-0123456789';

/** The redirect cases against `profile`. */
export function describeRedirectCases(
  profile: ProviderWireProfile,
  context: Pick<FailureContext, 'run' | 'answer' | 'settled' | 'failure'>,
): void {
  const { run, answer, settled, failure } = context;

  describe(`${profile.name}: a redirect to another origin`, () => {
    it.each([
      [307, (port: number) => `http://127.0.0.1:${port}/v1/elsewhere`],
      [308, (port: number) => `http://localhost:${port}/v1/elsewhere`],
      [302, (port: number) => `//localhost:${port}/protocol-relative`],
      [301, (port: number) => `http://localhost:${port}`],
    ])(
      '%i: not followed, nothing reaches the other origin, one error naming it, not retried',
      async (status, location) => {
        const elsewhere = await startWireServer(() => answer());
        const port = Number(new URL(elsewhere.url).port);
        const server = await startWireServer(() => ({
          status,
          headers: { location: location(port) },
          body: '',
        }));
        const end = failure(await run({ url: server.url, apiKey: key, maxRetries: 2 }));
        expect(elsewhere.requests).toHaveLength(0);
        expect(server.requests).toHaveLength(1);
        expect(profile.sentKey(server.requests[0] as RecordedRequest)).toBe(key);
        const target = new URL(location(port), server.url).origin;
        expect(end.error.message).toContain(
          `redirected (${status}) to ${target}, which is not followed`,
        );
        expect(end.error.isRetryable).toBe(false);
        expect(JSON.stringify(end)).not.toContain(key);
      },
    );

    it('to https on the same host and port (another origin): not followed', async () => {
      const server = await startWireServer(() => ({
        status: 308,
        headers: { location: 'https://127.0.0.1:1/' },
        body: '',
      }));
      const end = failure(await run({ url: server.url, apiKey: key, maxRetries: 0 }));
      expect(end.error.message).toContain('to https://127.0.0.1:1, which is not followed');
      expect(server.requests).toHaveLength(1);
    });
  });

  describe(`${profile.name}: a redirect within the origin`, () => {
    it('is followed with the same method, body and key: the answer arrives', async () => {
      const server = await startWireServer(
        (request, index): WireResponse =>
          index === 0 ? { status: 307, headers: { location: request.url }, body: '' } : answer(),
      );
      expect(settled(await run({ url: server.url, apiKey: key, maxRetries: 0 })).type).toBe('done');
      expect(server.requests).toHaveLength(2);
      const [first, second] = server.requests as [RecordedRequest, RecordedRequest];
      expect(second.method).toBe(first.method);
      expect(second.body).toBe(first.body);
      expect(profile.sentKey(second)).toBe(key);
    });

    it('a redirect loop ends in one error, not retried', async () => {
      const server = await startWireServer((request) => ({
        status: 307,
        headers: { location: request.url },
        body: '',
      }));
      const end = failure(await run({ url: server.url, apiKey: key, maxRetries: 2 }));
      expect(end.error.message).toContain('redirected more than 5 times');
      expect(server.requests).toHaveLength(6);
    });
  });
}
