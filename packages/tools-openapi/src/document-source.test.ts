import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenApiToolAdapter } from './openapi-tool-adapter.js';

// A document path or URL that never ends — a FIFO, /dev/zero, a server that keeps sending, a
// file bigger than any real document — is a clear error, not a hang or the process's memory.

const quiet = { onWarning: () => undefined };
const spec = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'pets', version: '1' },
  paths: {
    '/pets': { get: { operationId: 'listPets', responses: { '200': { description: 'ok' } } } },
  },
});

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-document-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('fromFile', () => {
  it('reads a regular file', async () => {
    const path = join(scratch(), 'api.json');
    writeFileSync(path, spec);
    expect((await OpenApiToolAdapter.fromFile(path, quiet)).tools.map((tool) => tool.name)).toEqual(
      ['listPets'],
    );
  });

  it('a FIFO with no writer, a device, a folder: not a regular file (no hang)', async () => {
    const dir = scratch();
    const fifo = join(dir, 'api.json');
    execFileSync('mkfifo', [fifo]);
    const zero = join(dir, 'zero.json');
    symlinkSync('/dev/zero', zero);
    for (const path of [fifo, zero, dir])
      await expect(OpenApiToolAdapter.fromFile(path, quiet)).rejects.toThrow(
        `Cannot read the OpenAPI document ${path}: not a regular file`,
      );
  });

  it('a path that is not there: "no such file", not Node\'s ENOENT text', async () => {
    const path = join(scratch(), 'nope.yaml');
    const failure = OpenApiToolAdapter.fromFile(path, quiet);
    await expect(failure).rejects.toThrow(`Cannot read the OpenAPI document ${path}: no such file`);
    await expect(OpenApiToolAdapter.fromFile(path, quiet)).rejects.not.toThrow(/ENOENT|stat '/);
  });

  it('a file over maxDocumentBytes is refused by its size, unread', async () => {
    const path = join(scratch(), 'huge.json');
    writeFileSync(path, spec);
    truncateSync(path, 3 * 1024 * 1024 * 1024);
    await expect(OpenApiToolAdapter.fromFile(path, quiet)).rejects.toThrow(
      '3072 MiB, larger than 64 MiB (maxDocumentBytes)',
    );
    const small = join(scratch(), 'api.json');
    writeFileSync(small, spec);
    await expect(
      OpenApiToolAdapter.fromFile(small, { ...quiet, maxDocumentBytes: 10 }),
    ).rejects.toThrow('larger than 0 MiB (maxDocumentBytes)');
  });
});

describe('fromUrl', () => {
  it('a server that never stops sending is cut at maxDocumentBytes', async () => {
    let closed = false;
    const url = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (!closed && response.write(chunk));
        if (!closed) response.once('drain', pump);
      };
      response.on('close', () => {
        closed = true;
      });
      pump();
    });
    await expect(
      OpenApiToolAdapter.fromUrl(`${url}/api.json`, {
        ...quiet,
        maxDocumentBytes: 4 * 1024 * 1024,
      }),
    ).rejects.toThrow('more than 4 MiB, larger than 4 MiB (maxDocumentBytes)');
  });

  it('a declared length over the limit is refused before the body is read', async () => {
    const url = await serve((_request, response) => {
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': '999999999',
      });
      response.write('{');
    });
    await expect(OpenApiToolAdapter.fromUrl(`${url}/api.json`, quiet)).rejects.toThrow(
      '953.7 MiB, larger than 64 MiB (maxDocumentBytes)',
    );
  });

  it('a document within the limit loads', async () => {
    const url = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(spec);
    });
    const adapter = await OpenApiToolAdapter.fromUrl(`${url}/api.json`, quiet);
    expect(adapter.tools.map((tool) => tool.name)).toEqual(['listPets']);
  });
});

describe('fromUrl with a user name and password in the URL', () => {
  const basic = `Basic ${Buffer.from('alice:s3cret pw').toString('base64')}`;

  it('loads the document sending them as Basic authorization, the URL without them', async () => {
    const seen: { url: string | undefined; authorization: string | undefined }[] = [];
    const url = await serve((request, response) => {
      seen.push({ url: request.url, authorization: request.headers.authorization });
      response.end(spec);
    });
    const adapter = await OpenApiToolAdapter.fromUrl(
      `${url.replace('http://', 'http://alice:s3cret%20pw@')}/spec`,
      quiet,
    );
    expect(adapter.tools.map((tool) => tool.name)).toEqual(['listPets']);
    expect(seen).toEqual([{ url: '/spec', authorization: basic }]);
  });

  it('a failure names the URL without them', async () => {
    // A port nobody listens on any more.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const error = await OpenApiToolAdapter.fromUrl(
      `http://alice:s3cret%20pw@127.0.0.1:${port}/spec`,
      quiet,
    ).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    expect(error?.message).toMatch(
      new RegExp(`^Cannot fetch the OpenAPI document http://127\\.0\\.0\\.1:${port}/spec: `),
    );
    expect(error?.message).not.toContain('s3cret');
    expect(error?.message).not.toContain('alice');
  });

  it('a failure names the URL without the keys in its query (?api_key=…)', async () => {
    const server = createServer((_request, response) => {
      response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const error = await OpenApiToolAdapter.fromUrl(
        `http://127.0.0.1:${port}/spec?api_key=k-live-0123456789&token=t0k3n-abcdef&v=3`,
        quiet,
      ).then(
        () => undefined,
        (thrown: unknown) => thrown as Error,
      );
      expect(error?.message).toBe(
        `Cannot fetch the OpenAPI document http://127.0.0.1:${port}/spec?api_key=***&token=***&v=3: HTTP 404 Not Found`,
      );
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
