import type { JsonSchemaObject } from '@agent/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dropAbsentNulls, toGeminiSchema } from './gemini-schema.js';

describe('toGeminiSchema', () => {
  it('falls back to a free-form object with a warning when the schema cannot be converted', () => {
    const result = toGeminiSchema({
      type: 'object',
      properties: { a: { $ref: '#/$defs/Missing' } },
    });
    expect(result.schema).toEqual({ type: 'object' });
    expect(result.warnings[0]).toMatch(/could not be converted .*Unresolvable \$ref/);
  });

  it('a type named like an Object.prototype property converts without a throw', () => {
    for (const type of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      const schema = {
        type: 'object',
        properties: {
          a: { anyOf: [{ type }, { type: 'string' }], minLength: 1 },
          b: { type: [type, 'number'], minimum: 0 },
        },
      } as unknown as JsonSchemaObject;
      expect(() => toGeminiSchema(schema)).not.toThrow();
    }
  });

  it('inlines references, rewrites const/oneOf and reports what it drops', () => {
    const result = toGeminiSchema({
      type: 'object',
      $defs: { Point: { type: 'object', properties: { x: { type: 'number' } } } },
      properties: {
        at: { $ref: '#/$defs/Point' },
        mode: { const: 'fast' },
        shape: { oneOf: [{ type: 'string' }, { type: 'number' }] },
        flag: { enum: [true] },
        never: { not: { type: 'string' } },
      },
    });
    expect(result.schema).toEqual({
      type: 'object',
      properties: {
        at: { type: 'object', properties: { x: { type: 'number' } } },
        mode: { enum: ['fast'] },
        shape: { anyOf: [{ type: 'string' }, { type: 'number' }] },
        flag: { type: 'boolean' },
        never: {},
      },
    });
    expect(result.warnings).toEqual([
      'enum of boolean at "flag" dropped',
      'not at "never" dropped',
    ]);
  });

  it('expresses nullable types in the OpenAPI dialect', () => {
    const { schema, warnings } = toGeminiSchema(
      {
        type: 'object',
        properties: {
          name: { type: ['string', 'null'] },
          age: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
          extra: { type: 'object', additionalProperties: { type: 'string' } },
        },
      },
      'openapi',
    );
    expect(schema).toEqual({
      type: 'OBJECT',
      properties: {
        name: { type: 'STRING', nullable: true },
        age: { type: 'INTEGER', nullable: true },
        extra: { type: 'OBJECT' },
      },
    });
    expect(warnings).toEqual(['additionalProperties at "extra" dropped']);
  });

  it('never throws and never emits keywords Gemini rejects (property)', () => {
    const leaf = fc.oneof(
      fc.constant({ type: 'string' }),
      fc.constant({ type: 'number', exclusiveMinimum: 0 }),
      fc.constant({ const: 3 }),
      fc.constant({ type: ['string', 'null'] }),
      fc.constant({ $ref: '#/$defs/Thing' }),
      fc.constant({ type: 'string', pattern: 'a+', default: 'a' }),
    );
    const schema = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        leaf,
        fc.record({
          type: fc.constant('object'),
          properties: fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), tie('node'), {
            maxKeys: 3,
          }),
          additionalProperties: fc.boolean(),
        }),
        fc.record({ type: fc.constant('array'), items: tie('node') }),
        fc.record({ oneOf: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
      ),
    }));
    fc.assert(
      fc.property(schema.node, fc.constantFrom('json-schema', 'openapi'), (node, dialect) => {
        const root: JsonSchemaObject = {
          type: 'object',
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          $defs: { Thing: { type: 'boolean' } },
          properties: { value: node as JsonSchemaObject },
        };
        const { schema: out } = toGeminiSchema(root, dialect as 'json-schema' | 'openapi');
        const text = JSON.stringify(out);
        for (const banned of ['$ref', '$schema', '$defs', 'oneOf', '"const"', 'exclusiveMinimum'])
          expect(text).not.toContain(banned);
        if (dialect === 'openapi') expect(text).not.toContain('additionalProperties');
      }),
      { numRuns: 200 },
    );
  });
});

describe('dropAbsentNulls', () => {
  it('removes nulls standing for absent optional fields, keeps meaningful ones', () => {
    const schema = {
      type: 'object',
      required: ['id'],
      properties: {
        id: { type: ['string', 'null'] },
        note: { type: 'string' },
        maybe: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        nested: { type: 'object', properties: { depth: { type: 'number' } } },
      },
    };
    expect(
      dropAbsentNulls({ id: null, note: null, maybe: null, nested: { depth: null } }, schema),
    ).toEqual({ id: null, maybe: null, nested: {} });
  });
});

describe('properties named like Object.prototype members (a tool schema is JSON from a server)', () => {
  // As text, so `__proto__` is a key of the schema and of the arguments, as JSON.parse makes them.
  const schema = JSON.parse(`{
    "type": "object",
    "properties": {
      "__proto__": { "type": "object", "properties": { "x": { "type": "string" } } },
      "constructor": { "type": "string" }
    },
    "required": ["__proto__", "constructor", "toString"],
    "allOf": [
      { "type": "object", "properties": { "__proto__": { "type": "object", "properties": { "x": { "type": "string" } } } } },
      { "type": "object", "properties": { "constructor": { "type": "string" }, "valueOf": { "type": "number" } } }
    ]
  }`) as JsonSchemaObject;

  it.each(['json-schema', 'openapi'] as const)(
    'are kept in the %s dialect, and required names only own properties',
    (dialect) => {
      const { schema: converted } = toGeminiSchema(schema, dialect);
      const properties = converted.properties as Record<string, unknown>;
      expect(Object.getPrototypeOf(properties)).toBe(Object.prototype);
      expect(Object.keys(properties).sort()).toEqual(['__proto__', 'constructor', 'valueOf']);
      expect(Object.getOwnPropertyDescriptor(properties, '__proto__')?.value).toHaveProperty(
        'properties.x',
      );
      // `toString` is no property: Gemini refuses a required name it cannot find.
      expect(converted.required).toEqual(['__proto__', 'constructor']);
    },
  );

  it('arguments keep them as fields when absent nulls are dropped', () => {
    const value = JSON.parse('{"__proto__": {"x": null}, "constructor": "c", "toString": null}');
    const clean = dropAbsentNulls(value, schema) as Record<string, unknown>;
    expect(Object.getPrototypeOf(clean)).toBe(Object.prototype);
    // `toString` is not declared: its null is kept for validation to judge, as any unknown key's.
    expect(JSON.stringify(clean)).toBe('{"__proto__":{},"constructor":"c","toString":null}');
  });
});

describe('OpenAPI-dialect repairs', () => {
  it('prunes required names missing from properties, deduplicates enums', () => {
    const { schema, warnings } = toGeminiSchema(
      {
        type: 'object',
        properties: { a: { type: 'string', enum: ['x', 'y', 'x'] } },
        required: ['a', 'ghost'],
      },
      'openapi',
    );
    expect(schema).toEqual({
      type: 'OBJECT',
      properties: { a: { type: 'STRING', enum: ['x', 'y'], format: 'enum' } },
      required: ['a'],
    });
    expect(warnings.join('\n')).toContain('required names missing from properties');
  });

  it('keeps items with the array branch of a multi-type or oneOf schema', () => {
    const multi = toGeminiSchema(
      {
        type: 'object',
        properties: {
          ids: { type: ['array', 'string'], items: { type: 'integer' }, maxLength: 9 },
        },
      },
      'openapi',
    ).schema as { properties: { ids: { anyOf: unknown[]; items?: unknown } } };
    expect(multi.properties.ids.items).toBeUndefined();
    expect(multi.properties.ids.anyOf).toEqual([
      { type: 'ARRAY', items: { type: 'INTEGER' } },
      { type: 'STRING', maxLength: 9 },
    ]);

    const oneOf = toGeminiSchema(
      {
        type: 'object',
        properties: {
          ids: { oneOf: [{ type: 'array' }, { type: 'string' }], items: { type: 'string' } },
        },
      },
      'openapi',
    ).schema as { properties: { ids: { anyOf: unknown[]; items?: unknown } } };
    expect(oneOf.properties.ids.items).toBeUndefined();
    expect(oneOf.properties.ids.anyOf).toEqual([
      { type: 'ARRAY', items: { type: 'STRING' } },
      { type: 'STRING' },
    ]);
  });

  it('keeps an object’s properties beside untyped anyOf branches', () => {
    const { schema } = toGeminiSchema(
      {
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'string' } },
        anyOf: [{ required: ['a'] }, { required: ['b'] }],
      },
      'openapi',
    );
    expect((schema as { properties?: unknown }).properties).toEqual({
      a: { type: 'STRING' },
      b: { type: 'STRING' },
    });
  });
});
