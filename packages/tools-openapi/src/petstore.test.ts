import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { OpenApiToolAdapter, type OpenApiToolOptions } from './openapi-tool-adapter.js';
import { callTool, fixture, resultJson, resultText, untrustedBody } from './test-helpers.js';
import {
  type PetstoreServer,
  petstoreApiKey,
  startPetstoreServer,
  tinyPng,
} from './test-petstore-server.js';

let server: PetstoreServer;
beforeAll(async () => {
  server = await startPetstoreServer();
});
afterAll(async () => {
  await server.close();
});

interface Variant {
  label: string;
  version: '2.0' | '3.0' | '3.1';
  text: () => string;
  /** How the tools find the test server: server variables (3.0) or baseUrl. */
  location: () => OpenApiToolOptions;
}

const yamlToJson = (text: string) => JSON.stringify(parseYaml(text));
const jsonToYaml = (text: string) => stringifyYaml(JSON.parse(text));

const variants: Variant[] = [
  {
    label: 'OpenAPI 3.0 (YAML)',
    version: '3.0',
    text: () => fixture('petstore-3.0.yaml'),
    location: () => ({ serverVariables: { port: String(server.port) } }),
  },
  {
    label: 'OpenAPI 3.0 (JSON)',
    version: '3.0',
    text: () => yamlToJson(fixture('petstore-3.0.yaml')),
    location: () => ({ serverVariables: { port: String(server.port) } }),
  },
  {
    label: 'OpenAPI 3.1 (JSON)',
    version: '3.1',
    text: () => fixture('petstore-3.1.json'),
    location: () => ({ baseUrl: server.baseUrl }),
  },
  {
    label: 'OpenAPI 3.1 (YAML)',
    version: '3.1',
    text: () => jsonToYaml(fixture('petstore-3.1.json')),
    location: () => ({ baseUrl: server.baseUrl }),
  },
  {
    label: 'Swagger 2.0 (YAML)',
    version: '2.0',
    text: () => fixture('petstore-2.0.yaml'),
    location: () => ({ baseUrl: server.baseUrl }),
  },
  {
    label: 'Swagger 2.0 (JSON)',
    version: '2.0',
    text: () => yamlToJson(fixture('petstore-2.0.yaml')),
    location: () => ({ baseUrl: server.baseUrl }),
  },
];

const expectedNames = [
  'listPets',
  'createPet',
  'searchPets',
  'showPetById',
  'deletePet',
  'getPetPhoto',
  'getPetCertificate',
  'addPetNote',
  'uploadPetFile',
  'getOwner',
  'getReport',
  'dumpStore',
];

describe.each(variants)('petstore via $label', (variant) => {
  const load = (options: OpenApiToolOptions = {}) =>
    OpenApiToolAdapter.fromString(variant.text(), {
      ...variant.location(),
      onWarning: () => undefined,
      ...options,
    });
  const withKey = () => load({ auth: { type: 'apiKey', value: petstoreApiKey } });
  const lastRequest = () => {
    const request = server.requests.at(-1);
    if (request === undefined) throw new Error('the server saw no request');
    return request;
  };

  it('makes one tool per operation with names, sources, tiers and subjects', () => {
    const adapter = load();
    expect(adapter.specVersion).toBe(variant.version);
    expect(adapter.tools.map((tool) => tool.name)).toEqual(expectedNames);
    expect(adapter.warnings).toEqual([]);
    const show = adapter.tool('showPetById');
    expect(show?.source).toBe('openapi:swagger-petstore');
    expect(show?.policy?.permission).toBe('read-only');
    expect(adapter.tool('deletePet')?.policy?.permission).toBe('full-access');
    expect(show?.permissionSubjects?.({ petId: 7 })).toEqual(['GET /pets/{petId}']);
    expect(show?.description).toMatch(/^Info for a specific pet \(GET \/pets\/\{petId\}\)/);
    for (const tool of adapter.tools) {
      expect(JSON.stringify(tool.parameters)).not.toContain('$ref');
      expect(tool.parameters.additionalProperties).toBe(false);
    }
  });

  it('builds request schemas: readOnly dropped, nullable as a null type, recursion cut, path params required', () => {
    const adapter = load();
    const create = adapter.tool('createPet')?.parameters;
    expect(create?.required).toEqual(['body']);
    const body = create?.properties?.body;
    expect(body?.properties).not.toHaveProperty('id');
    expect(body?.required).toEqual(['name']);
    expect(body?.properties?.tag?.type).toEqual(['string', 'null']);
    const category = body?.properties?.category;
    expect(category?.properties?.parent?.type).toBe('object');
    expect(String(category?.properties?.parent?.description)).toMatch(/^Recursive Category/);
    expect(adapter.tool('showPetById')?.parameters.required).toEqual(['petId']);
    expect(adapter.tool('showPetById')?.validate?.({ petId: 'abc' }).ok).toBe(false);
    expect(adapter.tool('createPet')?.validate?.({ body: { name: 'x', tag: null } }).ok).toBe(true);
    expect(adapter.tool('listPets')?.validate?.({ limit: 1, unknown: 1 }).ok).toBe(false);
  });

  it('lists pets with query arrays serialised per style/explode (or collectionFormat)', async () => {
    const result = await callTool(load().tool('listPets'), {
      limit: 5,
      tags: ['dog', 'cat'],
      sort: ['name', 'id'],
    });
    expect(lastRequest().url).toBe('/v1/pets?limit=5&tags=dog&tags=cat&sort=name,id');
    expect(result.isError).toBeUndefined();
    const text = resultText(result);
    expect(text).toContain('\n  {\n    "id": 1,'); // pretty-printed
    expect((resultJson(result) as { name: string }[]).map((pet) => pet.name)).toEqual([
      'Rex',
      'Tom',
    ]);
    expect(result.details?.status).toBe(200);
    expect(result.details?.headers['content-type']).toBe('application/json');
  });

  it('reads one pet, and reports a 404 as an error result the model reads', async () => {
    const adapter = load();
    const found = await callTool(adapter.tool('showPetById'), { petId: 1 });
    expect(resultJson(found)).toMatchObject({ id: 1, name: 'Rex' });
    const missing = await callTool(adapter.tool('showPetById'), { petId: 999 });
    expect(missing.isError).toBe(true);
    const text = resultText(missing);
    expect(text).toMatch(
      /^HTTP 404 Not Found \(Pet not found\)\nGET http:\/\/127\.0\.0\.1:\d+\/v1\/pets\/999\n/,
    );
    expect(text).toContain('"message": "Pet 999 not found"');
    expect(missing.details?.status).toBe(404);
  });

  it('sends the API key from the security scheme only when configured, and a JSON body', async () => {
    const denied = await callTool(load().tool('createPet'), { body: { name: 'Kit' } });
    expect(denied.isError).toBe(true);
    expect(resultText(denied)).toContain('HTTP 401 Unauthorized');
    const created = await callTool(withKey().tool('createPet'), {
      body: { name: 'Kit', tag: null },
    });
    expect(created.isError).toBeUndefined();
    const request = lastRequest();
    expect(request.headers['x-api-key']).toBe(petstoreApiKey);
    expect(request.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual({ name: 'Kit', tag: null });
    const pet = resultJson(created) as { id: number; name: string; tag: unknown };
    expect(pet).toMatchObject({ name: 'Kit' });
    // `security: []` on a read: the key is not sent there.
    await callTool(withKey().tool('showPetById'), { petId: 1 });
    expect(lastRequest().headers['x-api-key']).toBeUndefined();
    const deleted = await callTool(withKey().tool('deletePet'), { petId: pet.id });
    expect(resultText(deleted)).toBe('HTTP 204 No Content (no body)');
  });

  it('returns an image as image content and describes a binary without dumping it', async () => {
    const photo = await callTool(load().tool('getPetPhoto'), { petId: 1 });
    expect(photo.content[0]).toEqual({
      type: 'text',
      text: 'HTTP 200 OK: image/png image, 70 bytes',
    });
    expect(photo.content[1]).toEqual({
      type: 'image',
      mimeType: 'image/png',
      data: Buffer.from(tinyPng).toString('base64'),
    });
    const pdf = await callTool(load().tool('getPetCertificate'), { petId: 1 });
    expect(resultText(pdf)).toBe('HTTP 200 OK: binary application/pdf body, 2.0 KiB (not shown)');
    expect(pdf.details?.bytes).toBe(2057);
  });

  it('sends a form-urlencoded body and a multipart body with a file part', async () => {
    const adapter = withKey();
    const note = await callTool(adapter.tool('addPetNote'), {
      petId: 2,
      body: { text: 'a&b=c', author: 'Ann' },
    });
    expect(resultJson(note)).toEqual({
      petId: 2,
      contentType: 'application/x-www-form-urlencoded',
      text: 'a&b=c',
      author: 'Ann',
    });
    expect(adapter.tool('uploadPetFile')?.parameters.properties?.body?.required).toEqual(['file']);
    const upload = await callTool(adapter.tool('uploadPetFile'), {
      petId: 2,
      body: { caption: 'vet report', file: 'all good\n' },
    });
    expect(resultJson(upload)).toEqual({
      petId: 2,
      caption: 'vet report',
      fileIsFile: true,
      fileContent: 'all good\n',
    });
    expect(String(lastRequest().headers['content-type'])).toMatch(
      /^multipart\/form-data; boundary=/,
    );
  });

  it('percent-encodes path parameters', async () => {
    const result = await callTool(load().tool('getOwner'), { ownerName: 'Ann Lee/2?' });
    expect(lastRequest().url).toBe('/v1/owners/Ann%20Lee%2F2%3F');
    expect(resultJson(result)).toEqual({ name: 'Ann Lee/2?' });
  });

  it('returns text as text and clips a huge JSON body with a note', async () => {
    const report = await callTool(load().tool('getReport'), {});
    expect(untrustedBody(resultText(report)).inner).toBe(
      'Daily report: 3 pets, 1 sold.\nAll is well.',
    );
    const dump = await callTool(load({ maxResponseChars: 1000 }).tool('dumpStore'), {});
    // A clipped JSON body is no longer JSON: it is fenced as text, our clip note after the markers.
    const { inner, after } = untrustedBody(resultText(dump));
    expect(inner.length).toBe(1000);
    expect(after).toMatch(/^\n\[Response clipped: showing the first 1,000 of [\d,]+ characters\./);
    expect(dump.details?.clipped).toBe(true);
    expect(dump.isError).toBeUndefined();
  });

  it('sends header, cookie and (3.x) deepObject parameters', async () => {
    const tool = load().tool('searchPets');
    if (variant.version === '2.0') {
      await callTool(tool, { status: 'sold', 'X-Request-Id': 'r-1' });
      expect(lastRequest().url).toBe('/v1/pets/search?status=sold');
    } else {
      const result = await callTool(tool, {
        filter: { status: 'sold' },
        'X-Request-Id': 'r-1',
        session: 'abc 1',
      });
      expect(lastRequest().url).toBe('/v1/pets/search?filter[status]=sold');
      expect(lastRequest().headers.cookie).toBe('session=abc%201');
      expect((resultJson(result) as { name: string }[]).map((pet) => pet.name)).toEqual(['Tom']);
    }
    expect(lastRequest().headers['x-request-id']).toBe('r-1');
    expect(lastRequest().headers.accept).toMatch(/^application\/json/);
  });
});
