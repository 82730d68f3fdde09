// web_fetch with private addresses allowed for a host (the CLI's webFetchPrivateHosts: your dev
// server on localhost:3000): while your server there is not running, any user of the machine can
// listen on its port, and was sent the URL asked for (its query too) while their page reached the
// model. Real sockets; the other user is `nobody` running the system's python3 (as root only).
import { executeTool } from '@agent/core';
import { nobodyUid, recordingServerAs, skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWebFetchTool } from './web-fetch.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function serverAs(uid: number) {
  const server = await recordingServerAs(uid);
  cleanups.push(() => server.stop());
  return server;
}

async function fetchWith(url: string) {
  const tool = createWebFetchTool({
    allowPrivateAddress: (host) => host === 'localhost' || host === '127.0.0.1',
  });
  const result = await executeTool(tool, { url });
  return {
    isError: result.isError === true,
    text: result.content.map((part) => (part.type === 'text' ? part.text : '')).join(''),
  };
}

describe.skipIf(process.platform !== 'linux' || process.getuid?.() !== 0)(
  "web_fetch of a loopback port another user's process listens on",
  () => {
    beforeEach(skipWithout('python3'));

    it.each(['127.0.0.1', 'localhost'])(
      '%s: nothing is sent; the error names the user',
      async (host) => {
        const theirs = await serverAs(nobodyUid);
        const result = await fetchWith(`http://${host}:${theirs.port}/admin?session=abc123`);
        expect(result.isError).toBe(true);
        expect(result.text).toContain('belongs to another user of this machine (uid 65534)');
        expect(await theirs.received()).toBe('');
      },
    );

    it("a system account's server (uid < 1000) is fetched as before", async () => {
      const service = await serverAs(1);
      await fetchWith(`http://127.0.0.1:${service.port}/`);
      expect((await service.received()).toLowerCase()).toContain(`host: 127.0.0.1:${service.port}`);
    });
  },
);
