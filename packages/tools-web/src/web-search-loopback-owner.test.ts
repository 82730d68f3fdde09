// A search server on a loopback port (SEARXNG_URL=http://localhost:8888, a self-hosted SearXNG;
// a Brave or Tavily base URL through a local proxy): while the user's server there is not running,
// any user of the machine can listen on the port, and was sent every query — words of the
// conversation — with the API key, and chose the results the model read. Real sockets; the other
// user is `nobody` running the system's python3 (as root only: only root can be another user).
import { executeTool } from '@agent/core';
import { nobodyUid, recordingServerAs, skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWebSearchTool, type WebSearchBackend } from './web-search.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const key = 'searx-key-0123456789abcdefghijklmnop';
const query = 'quarterly figures of project heron';

async function serverAs(uid: number) {
  const server = await recordingServerAs(uid);
  cleanups.push(() => server.stop());
  return server;
}

async function search(backend: WebSearchBackend) {
  const result = await executeTool(createWebSearchTool({ backend }), { query });
  return {
    isError: result.isError === true,
    text: result.content.map((part) => (part.type === 'text' ? part.text : '')).join(''),
  };
}

describe.skipIf(process.platform !== 'linux' || process.getuid?.() !== 0)(
  "a search server on a loopback port another user's process listens on",
  () => {
    beforeEach(skipWithout('python3'));

    it.each([
      ['searxng', (origin: string): WebSearchBackend => ({ type: 'searxng', baseUrl: origin })],
      [
        'searxng with a key, as localhost',
        (origin: string): WebSearchBackend => ({
          type: 'searxng',
          baseUrl: origin.replace('127.0.0.1', 'localhost'),
          apiKey: key,
        }),
      ],
      [
        'tavily',
        (origin: string): WebSearchBackend => ({ type: 'tavily', apiKey: key, baseUrl: origin }),
      ],
      [
        'brave',
        (origin: string): WebSearchBackend => ({ type: 'brave', apiKey: key, baseUrl: origin }),
      ],
    ])('%s: nothing is sent; the error names the user', async (_name, backend) => {
      const theirs = await serverAs(nobodyUid);
      const result = await search(backend(theirs.origin));
      expect(result.isError).toBe(true);
      expect(result.text).toContain('belongs to another user of this machine (uid 65534)');
      expect(await theirs.received()).toBe('');
    });

    it("a system account's server (a packaged SearXNG's own user, uid < 1000) is searched", async () => {
      const service = await serverAs(1);
      await search({ type: 'searxng', baseUrl: service.origin, apiKey: key });
      expect(await service.received()).toContain(key);
    });
  },
);
