// A hostile (or generated) document must load in bounded time and stack, or fail with an error
// that names the spot: schemas nested thousands of levels deep without a `$ref`, values nested as
// deep in `default`/`enum`, and thousands of operations that share one operationId.
import { describe, expect, it } from 'vitest';
import { OpenApiToolAdapter } from './openapi-tool-adapter.js';

const document = (schema: unknown, extra: Record<string, unknown> = {}) => ({
  openapi: '3.1.0',
  info: { title: 'Bombs', version: '1' },
  servers: [{ url: 'https://api.example.com' }],
  paths: {
    '/things': {
      post: {
        operationId: 'create',
        parameters: [{ name: 'filter', in: 'query', schema }],
        requestBody: { content: { 'application/json': { schema } } },
        responses: { 200: { description: 'ok', content: { 'application/json': { schema } } } },
        ...extra,
      },
    },
  },
});

function nest(levels: number, wrap: (inner: unknown) => unknown): unknown {
  let schema: unknown = { type: 'string' };
  for (let level = 0; level < levels; level++) schema = wrap(schema);
  return schema;
}

const shapes: [string, (inner: unknown) => unknown][] = [
  ['properties', (inner) => ({ type: 'object', properties: { x: inner } })],
  ['items', (inner) => ({ type: 'array', items: inner })],
  ['allOf', (inner) => ({ allOf: [inner] })],
  ['anyOf', (inner) => ({ anyOf: [inner, { type: 'null' }] })],
  ['additionalProperties', (inner) => ({ type: 'object', additionalProperties: inner })],
  ['not', (inner) => ({ not: inner })],
  ['patternProperties', (inner) => ({ patternProperties: { '^a': inner } })],
];

function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    deepest = Math.max(deepest, depth);
    if (node !== null && typeof node === 'object')
      for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

describe('schemas nested deeper than any stack', () => {
  for (const [shape, wrap] of shapes)
    it.each([200, 5_000, 50_000])(`${shape} × %i loads, cut with a note`, (levels) => {
      const adapter = OpenApiToolAdapter.fromSpec(document(nest(levels, wrap)), {
        onWarning: () => undefined,
      });
      const parameters = adapter.tool('create')?.parameters;
      expect(JSON.stringify(parameters)).toContain('levels deep (structure not expanded here)');
      // Each schema level is at most a few JSON levels (anyOf → array → schema).
      expect(depthOf(parameters)).toBeLessThan(4 * 130);
      // The cut schema still validates (the validator compiles it) without a stack overflow.
      expect(adapter.tool('create')?.validate?.({}).ok).toBe(true);
    });

  it('the same from JSON text', () => {
    const levels = 20_000;
    const text = JSON.stringify(document({ $ref: '#/x' })).replaceAll(
      '{"$ref":"#/x"}',
      `${'{"items":'.repeat(levels)}{"type":"string"}${'}'.repeat(levels)}`,
    );
    const parameters = OpenApiToolAdapter.fromString(text, { onWarning: () => undefined }).tool(
      'create',
    )?.parameters;
    expect(JSON.stringify(parameters)).toContain('levels deep');
  });

  it('a schema within the limit is kept whole', () => {
    const schema = nest(40, (inner) => ({ type: 'object', properties: { x: inner } }));
    const parameters = OpenApiToolAdapter.fromSpec(document(schema)).tool('create')?.parameters;
    expect(JSON.stringify(parameters)).not.toContain('levels deep');
    expect(JSON.stringify(parameters?.properties?.body)).toContain('"type":"string"');
  });

  it.each(['default', 'enum', 'const', 'example'])(
    'a value nested 200,000 levels deep in %s is dropped, not a crash',
    (keyword) => {
      const value = nest(200_000, (inner) => ({ a: inner }));
      const schema = { type: 'object', [keyword]: keyword === 'enum' ? [value, value] : value };
      const parameters = OpenApiToolAdapter.fromSpec(document(schema), {
        onWarning: () => undefined,
      }).tool('create')?.parameters;
      expect(depthOf(parameters)).toBeLessThan(20);
    },
  );
});

describe('one operationId on thousands of operations', () => {
  it('gives each a unique name in linear time', () => {
    const count = 20_000;
    const paths: Record<string, unknown> = {};
    for (let index = 0; index < count; index++)
      paths[`/p${index}`] = {
        get: { operationId: 'a'.repeat(80), responses: { 200: { description: 'ok' } } },
      };
    const adapter = OpenApiToolAdapter.fromSpec(
      { ...document({}), paths },
      { onWarning: () => undefined },
    );
    const names = adapter.tools.map((tool) => tool.name);
    expect(new Set(names).size).toBe(count);
    expect(names.every((name) => /^[a-zA-Z0-9_-]{1,64}$/.test(name))).toBe(true);
    expect(names.slice(0, 2)).toEqual([names[0], `${names[0]?.slice(0, 62)}_2`]);
    expect(names.at(-1)?.endsWith(`_${count}`)).toBe(true);
    // The quadratic version ran past this test's timeout (~100 s for 20,000 here; now ~1 s).
  }, 60_000);
});

describe('a $ref that is not a string', () => {
  it.each([5, null, true, { $ref: '#/x' }, ['#/x']])('%j is an error naming the spot', (ref) => {
    expect(() =>
      OpenApiToolAdapter.fromSpec(document({ type: 'object', properties: { a: { $ref: ref } } })),
    ).toThrow(
      /at #\/paths\/~1things\/post\/parameters\/0\/schema\/properties\/a\/\$ref: "\$ref" must be a string/,
    );
  });

  it('a property named $ref is still a property', () => {
    const parameters = OpenApiToolAdapter.fromSpec(
      document({ type: 'object', properties: { $ref: { type: 'string' } } }),
      { onWarning: () => undefined },
    ).tool('create')?.parameters;
    expect(parameters?.properties?.filter).toEqual({
      type: 'object',
      properties: { $ref: { type: 'string' } },
    });
  });
});
