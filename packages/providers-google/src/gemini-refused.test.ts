// A server that is not there: the error says why (the address and ECONNREFUSED), not only
// fetch's bare "fetch failed".
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { userMessage } from '@agent/core';
import { expect, it } from 'vitest';
import { createGeminiProvider } from './gemini-provider.js';

it('a refused connection names its cause', async () => {
  const closed = createServer();
  closed.listen(0, '127.0.0.1');
  await once(closed, 'listening');
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const provider = createGeminiProvider({
    apiKey: 'k',
    baseURL: `http://127.0.0.1:${port}`,
    maxRetries: 0,
  });
  let error: string | undefined;
  for await (const event of provider.stream({ model: 'm', messages: [userMessage('hi')] }))
    if (event.type === 'error') error = event.error.message;
  // Never reached: "failed", not "lost" (that is for a stream cut after the response began).
  expect(error).toMatch(/^Gemini connection failed: /);
  expect(error).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
});
