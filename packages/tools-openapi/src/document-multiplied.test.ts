// A document of kilobytes that multiplies into gigabytes: one path item reused through `$ref` by
// thousands of paths (each reuse is eight more operations), every operation using one large
// schema that is inlined into each tool. Before, 44 kB loaded as 4,000 tools in 8 s and 116 MB,
// and 50,000 reuses (1.5 MB) ran out of memory. Now `maxOperations` and `maxSchemaNodes` stop
// the load with an error naming the option; a real document far under them still loads.
import { describe, expect, it } from 'vitest';
import { OpenApiToolAdapter } from './openapi-tool-adapter.js';
import { OpenApiSpecError } from './spec-error.js';

const methods = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'query'];

function multiplied(reuses: number, properties: number): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (let index = 0; index < properties; index++)
    fields[`f${index}`] = { type: 'object', properties: { v: { type: 'string' } } };
  const operation = {
    requestBody: {
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Big' } } },
    },
    responses: { 200: { description: 'ok' } },
  };
  const paths: Record<string, unknown> = {
    '/base': Object.fromEntries(methods.map((method) => [method, operation])),
  };
  for (let index = 0; index < reuses; index++) paths[`/r${index}`] = { $ref: '#/paths/~1base' };
  return {
    openapi: '3.0.3',
    info: { title: 'Multiplied', version: '1' },
    servers: [{ url: 'https://api.example.com' }],
    paths,
    components: { schemas: { Big: { type: 'object', properties: fields } } },
  };
}

function loadError(document: unknown, options: Record<string, number>): OpenApiSpecError {
  try {
    OpenApiToolAdapter.fromSpec(document as Record<string, unknown>, {
      onWarning: () => undefined,
      ...options,
    });
  } catch (error) {
    if (OpenApiSpecError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('the document loaded');
}

describe('a document whose operations multiply', () => {
  it('more operations than maxOperations: an error naming it, before any tool is made', () => {
    const error = loadError(multiplied(200, 1), { maxOperations: 1_000 });
    expect(error.message).toBe(
      'The OpenAPI document has more than 1,000 operations (maxOperations; the next at #/paths/~1r124/get): raise maxOperations to load it',
    );
    expect(error.pointer).toBe('#/paths/~1r124/get');
  });

  it('tools that need more schema nodes together than maxSchemaNodes: an error naming it', () => {
    const error = loadError(multiplied(300, 200), { maxSchemaNodes: 200_000 });
    expect(error.message).toMatch(
      /^The OpenAPI document's tools need more than 200,000 schema nodes together \(maxSchemaNodes; at #\/paths\/~1\w+\/\w+\/requestBody\/content\/application~1json\/schema\): choose operations with include\/exclude, or raise maxSchemaNodes$/,
    );
  });

  it('operations left out by include do not count against maxSchemaNodes', () => {
    const adapter = OpenApiToolAdapter.fromSpec(multiplied(300, 200), {
      onWarning: () => undefined,
      maxSchemaNodes: 200_000,
      include: ['/r1'],
    });
    expect(adapter.tools).toHaveLength(8);
    expect(adapter.operationCount).toBe(8 * 301);
  });

  it('within both bounds the document loads whole', () => {
    const adapter = OpenApiToolAdapter.fromSpec(multiplied(20, 50), { onWarning: () => undefined });
    expect(adapter.tools).toHaveLength(8 * 21);
  });
});
