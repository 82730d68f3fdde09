// Test support (not exported): a real HTTP server on 127.0.0.1 that implements the petstore of
// __fixtures__/petstore-*.{yaml,json} and records every request it receives.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the server saw it. */
export interface RecordedRequest {
  method: string;
  /** The raw request target, e.g. `/v1/pets?tags=a&tags=b`. */
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A running petstore; `close()` stops it. */
export interface PetstoreServer {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** The API key the server accepts in `X-API-Key`. */
export const petstoreApiKey = 'secret-key';

/** A 1×1 transparent PNG. */
export const tinyPng = Uint8Array.from(
  atob(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  ),
  (char) => char.charCodeAt(0),
);

interface Pet {
  id: number;
  name: string;
  tag: string | null;
  status: string;
}

/** Starts the petstore on 127.0.0.1, port 0 (a free one). */
export async function startPetstoreServer(): Promise<PetstoreServer> {
  const pets: Pet[] = [
    { id: 1, name: 'Rex', tag: 'dog', status: 'available' },
    { id: 2, name: 'Tom', tag: 'cat', status: 'sold' },
    { id: 3, name: 'Nemo', tag: null, status: 'available' },
  ];
  const requests: RecordedRequest[] = [];
  let nextId = 4;

  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const recorded: RecordedRequest = {
      method: request.method ?? '',
      url: request.url ?? '',
      headers: request.headers,
      body,
    };
    requests.push(recorded);
    try {
      await route(recorded, Buffer.concat(chunks), response);
    } catch (error) {
      json(response, 500, { code: 500, message: String(error) });
    }
  });

  async function route(
    request: RecordedRequest,
    raw: Buffer,
    response: ServerResponse,
  ): Promise<void> {
    const url = new URL(request.url, 'http://localhost');
    const path = url.pathname;
    const authorised = request.headers['x-api-key'] === petstoreApiKey;
    const petMatch = /^\/v1\/pets\/([^/]+)(\/[a-z]+)?$/.exec(path);

    if (path === '/v1/pets' && request.method === 'GET') {
      const tags = url.searchParams.getAll('tags');
      const limit = Number(url.searchParams.get('limit') ?? 100);
      const found = pets.filter(
        (pet) => tags.length === 0 || (pet.tag !== null && tags.includes(pet.tag)),
      );
      return json(response, 200, found.slice(0, limit));
    }
    if (path === '/v1/pets' && request.method === 'POST') {
      if (!authorised)
        return json(response, 401, { code: 401, message: 'Missing or wrong API key' });
      const input = JSON.parse(request.body) as Partial<Pet>;
      const pet: Pet = {
        id: nextId++,
        name: String(input.name),
        tag: input.tag ?? null,
        status: 'available',
      };
      pets.push(pet);
      return json(response, 201, pet);
    }
    if (path === '/v1/pets/search') {
      const status = url.searchParams.get('filter[status]') ?? url.searchParams.get('status');
      return json(
        response,
        200,
        pets.filter((pet) => status === null || pet.status === status),
      );
    }
    if (petMatch !== null) {
      const id = Number(petMatch[1]);
      const pet = pets.find((candidate) => candidate.id === id);
      const sub = petMatch[2];
      if (sub === undefined && request.method === 'DELETE') {
        if (!authorised)
          return json(response, 401, { code: 401, message: 'Missing or wrong API key' });
        if (pet === undefined)
          return json(response, 404, { code: 404, message: `Pet ${id} not found` });
        pets.splice(pets.indexOf(pet), 1);
        response.writeHead(204).end();
        return;
      }
      if (pet === undefined)
        return json(response, 404, { code: 404, message: `Pet ${petMatch[1]} not found` });
      if (sub === undefined) return json(response, 200, pet);
      if (sub === '/photo') {
        response.writeHead(200, { 'content-type': 'image/png', 'content-length': tinyPng.length });
        response.end(tinyPng);
        return;
      }
      if (sub === '/certificate') {
        const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(2048, 0xff)]);
        response.writeHead(200, { 'content-type': 'application/pdf' });
        response.end(pdf);
        return;
      }
      if (sub === '/notes') {
        if (!authorised)
          return json(response, 401, { code: 401, message: 'Missing or wrong API key' });
        const form = new URLSearchParams(request.body);
        return json(response, 200, {
          petId: id,
          contentType: request.headers['content-type'],
          text: form.get('text'),
          author: form.get('author'),
        });
      }
      if (sub === '/files') {
        if (!authorised)
          return json(response, 401, { code: 401, message: 'Missing or wrong API key' });
        // Parse the multipart body with the platform's own parser.
        const parsed = await new Request('http://localhost/', {
          method: 'POST',
          headers: { 'content-type': String(request.headers['content-type']) },
          body: raw,
        }).formData();
        const file = parsed.get('file');
        return json(response, 200, {
          petId: id,
          caption: parsed.get('caption'),
          fileIsFile: typeof file === 'object' && file !== null,
          fileContent: typeof file === 'object' && file !== null ? await file.text() : file,
        });
      }
    }
    const owner = /^\/v1\/owners\/(.+)$/.exec(path);
    if (owner !== null) return json(response, 200, { name: decodeURIComponent(owner[1] ?? '') });
    if (path === '/v1/report') {
      response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      response.end('Daily report: 3 pets, 1 sold.\nAll is well.');
      return;
    }
    if (path === '/v1/dump') {
      const records = Array.from({ length: 4000 }, (_, index) => ({
        id: index,
        name: `pet-${index}`,
        note: 'x'.repeat(40),
      }));
      return json(response, 200, records);
    }
    json(response, 404, { code: 404, message: `No route for ${request.method} ${path}` });
  }

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

function json(response: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(text);
}
