// An API on a loopback port (`http://127.0.0.1:8080`): while the user's own server there is not
// running, any user of the machine can listen on the port and was sent the API key of every call
// (and a key in the document's URL when fromUrl fetched it). Real sockets; the other user is
// `nobody` running the system's python3 as the "API" (as root only: only root can be another user).
import { nobodyUid, recordingServerAs, skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpenApiToolAdapter } from './openapi-tool-adapter.js';
import { OpenApiSpecError } from './spec-error.js';
import { callTool } from './test-helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const key = 'sk-live-0123456789abcdefghijklmnopqrstuv';

/** The recording server as `uid` (`nobody`, or a system account), ended after the test. */
async function serverAs(uid: number) {
  const server = await recordingServerAs(uid);
  cleanups.push(() => server.stop());
  return server;
}

const document = (origin: string) => ({
  openapi: '3.0.3',
  info: { title: 'Local API', version: '1' },
  servers: [{ url: origin }],
  components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } } },
  security: [{ key: [] }],
  paths: {
    '/notes': {
      get: { operationId: 'listNotes', responses: { 200: { description: 'ok' } } },
    },
  },
});

describe.skipIf(process.platform !== 'linux' || process.getuid?.() !== 0)(
  "an API on a loopback port another user's process listens on",
  () => {
    beforeEach(skipWithout('python3'));

    it('a call with the API key is not sent; the error names the user', async () => {
      const theirs = await serverAs(nobodyUid);
      const adapter = OpenApiToolAdapter.fromSpec(document(`http://127.0.0.1:${theirs.port}`), {
        auth: { type: 'apiKey', value: key },
      });
      await expect(callTool(adapter.tool('listNotes'), {})).rejects.toThrow(
        `GET http://127.0.0.1:${theirs.port}/notes: the process listening on 127.0.0.1:${theirs.port} belongs to another user of this machine (uid 65534), not to you`,
      );
      expect(await theirs.received()).toBe('');
    });

    it('a bearer token of the headers option, to a localhost URL, is not sent either', async () => {
      const theirs = await serverAs(nobodyUid);
      const adapter = OpenApiToolAdapter.fromSpec(
        { ...document(`http://localhost:${theirs.port}`), security: [] },
        { headers: { authorization: `Bearer ${key}` } },
      );
      await expect(callTool(adapter.tool('listNotes'), {})).rejects.toThrow('(uid 65534)');
      expect(await theirs.received()).toBe('');
    });

    it("a call without credentials is not sent either: its arguments are the user's data", async () => {
      const theirs = await serverAs(nobodyUid);
      const adapter = OpenApiToolAdapter.fromSpec({
        ...document(`http://127.0.0.1:${theirs.port}`),
        security: [],
      });
      await expect(callTool(adapter.tool('listNotes'), {})).rejects.toThrow('(uid 65534)');
      expect(await theirs.received()).toBe('');
    });

    it('fromUrl fetches no document from their port: it would decide the tools', async () => {
      const theirs = await serverAs(nobodyUid);
      await expect(
        OpenApiToolAdapter.fromUrl(`http://127.0.0.1:${theirs.port}/openapi.json`),
      ).rejects.toThrow('another user of this machine (uid 65534)');
      expect(await theirs.received()).toBe('');
    });

    it("a system account's server (Ollama's `ollama` user, uid < 1000) is sent the key", async () => {
      const service = await serverAs(1);
      const adapter = OpenApiToolAdapter.fromSpec(document(`http://127.0.0.1:${service.port}`), {
        auth: { type: 'apiKey', value: key },
      });
      await callTool(adapter.tool('listNotes'), {});
      expect(await service.received()).toContain(key);
    });

    it("fromUrl with a key in the document's URL fetches nothing from their port", async () => {
      const theirs = await serverAs(nobodyUid);
      for (const url of [
        `http://me:${key}@127.0.0.1:${theirs.port}/openapi.json`,
        `http://127.0.0.1:${theirs.port}/openapi.json?api_key=${key}`,
      ]) {
        const error = await OpenApiToolAdapter.fromUrl(url).then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(OpenApiSpecError.isInstance(error)).toBe(true);
        expect(String((error as Error).message)).toContain(
          'another user of this machine (uid 65534)',
        );
        expect(String((error as Error).message)).not.toContain(key);
      }
      expect(await theirs.received()).toBe('');
    });
  },
);
