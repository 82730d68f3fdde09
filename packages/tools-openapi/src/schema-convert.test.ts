import { describe, expect, it } from 'vitest';
import { convertSchema } from './schema-convert.js';
import { OpenApiSpecError } from './spec-error.js';
import { type SpecDialect, SpecReader } from './spec-reader.js';

function convert(
  schema: unknown,
  components: Record<string, unknown> = {},
  dialect: SpecDialect = '3.0',
) {
  const reader = new SpecReader({ components: { schemas: components } }, dialect);
  return convertSchema(schema, '#/test', { reader });
}

describe('convertSchema', () => {
  it('turns 3.0 nullable into a null type, a null enum member, or anyOf with null', () => {
    expect(convert({ type: 'string', nullable: true })).toEqual({ type: ['string', 'null'] });
    expect(convert({ type: 'string', enum: ['a'], nullable: true })).toEqual({
      type: ['string', 'null'],
      enum: ['a', null],
    });
    expect(
      convert(
        { allOf: [{ $ref: '#/components/schemas/A' }], nullable: true, description: 'd' },
        { A: { type: 'object' } },
      ),
    ).toEqual({
      description: 'd',
      anyOf: [{ allOf: [{ type: 'object' }] }, { type: 'null' }],
    });
    expect(convert({ type: 'integer', 'x-nullable': true }, {}, '2.0')).toEqual({
      type: ['integer', 'null'],
    });
    expect(convert({ nullable: true })).toEqual({});
  });

  it('makes boolean exclusive bounds numeric, and file types binary strings', () => {
    expect(
      convert({
        type: 'number',
        minimum: 0,
        exclusiveMinimum: true,
        maximum: 9,
        exclusiveMaximum: false,
      }),
    ).toEqual({
      type: 'number',
      exclusiveMinimum: 0,
      maximum: 9,
    });
    expect(convert({ type: 'file' }, {}, '2.0')).toEqual({ type: 'string', format: 'binary' });
  });

  it('drops readOnly properties (also through $ref) and their required entries, and OpenAPI-only keywords', () => {
    expect(
      convert(
        {
          type: 'object',
          required: ['id', 'owner', 'name'],
          properties: {
            id: { type: 'integer', readOnly: true },
            owner: { $ref: '#/components/schemas/Owner' },
            name: { type: 'string', example: 'Rex', 'x-go-name': 'Name', xml: { name: 'n' } },
            secret: { type: 'string', writeOnly: true },
          },
          discriminator: { propertyName: 'name' },
          externalDocs: { url: 'https://example.com' },
        },
        { Owner: { type: 'object', readOnly: true } },
      ),
    ).toEqual({
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string' }, secret: { type: 'string' } },
    });
  });

  it('inlines $refs with their 3.1 siblings, and cuts a cycle keeping the type', () => {
    const components = {
      Node: {
        type: 'object',
        properties: {
          value: { type: 'string' },
          children: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
        },
      },
    };
    const node = convert(
      { $ref: '#/components/schemas/Node', description: 'A tree' },
      components,
      '3.1',
    );
    expect(node.description).toBe('A tree');
    expect(node.properties?.children).toEqual({
      type: 'array',
      items: {
        type: 'object',
        description: 'Recursive Node (structure not expanded here; see the same schema above).',
      },
    });
    expect(
      convert(
        { $ref: '#/components/schemas/Node', properties: { extra: { type: 'string' } } },
        components,
        '3.1',
      ).allOf,
    ).toHaveLength(2);
  });

  it('keeps portable patterns and moves the others into the description', () => {
    expect(convert({ type: 'string', pattern: '^[a-z]+$' })).toEqual({
      type: 'string',
      pattern: '^[a-z]+$',
    });
    expect(convert({ type: 'string', pattern: '^\\p{L}+$', description: 'A word.' })).toEqual({
      type: 'string',
      description: 'A word. Must match the regular expression ^\\p{L}+$.',
    });
    expect(convert({ type: 'string', pattern: '(?i)abc' }).pattern).toBeUndefined();
  });

  it('rewrites escapes the u flag refuses, so the pattern compiles with and without it', () => {
    // Real documents' patterns (threatjammer, AWS lookoutvision, datasync): Ajv refused them.
    for (const [written, portable] of [
      ['^([A-Z0-9\\_]+)$', '^([A-Z0-9_]+)$'],
      ['^[a-zA-Z0-9\\/\\+\\=]{0,2048}$', '^[a-zA-Z0-9\\/\\+=]{0,2048}$'],
      ['^(?!.*[:\\"][^:"]*$).+$', '^(?!.*[:"][^:"]*$).+$'],
    ]) {
      const { pattern } = convert({ type: 'string', pattern: written });
      expect(pattern).toBe(portable);
      expect(() => new RegExp(String(pattern), 'u')).not.toThrow();
      expect(() => new RegExp(String(pattern))).not.toThrow();
    }
    // A quantified lookahead compiles only without the flag: advice, not a pattern.
    const quantified = convert({ type: 'string', pattern: '^(\\/(?!\\.)+[a-z]+)$' });
    expect(quantified.pattern).toBeUndefined();
    expect(quantified.description).toContain('Must match the regular expression');
  });

  it('clips long descriptions and bounds deep reference chains', () => {
    const long = convert({ type: 'string', description: `${'word '.repeat(400)}end` });
    expect(String(long.description).length).toBeLessThanOrEqual(1024);
    expect(String(long.description).endsWith('…')).toBe(true);
    const chain: Record<string, unknown> = {};
    for (let index = 0; index < 40; index++)
      chain[`S${index}`] = {
        type: 'object',
        properties: { next: { $ref: `#/components/schemas/S${index + 1}` } },
      };
    chain.S40 = { type: 'string' };
    const deep = JSON.stringify(convert({ $ref: '#/components/schemas/S0' }, chain));
    expect(deep).toContain('Nested S16 (structure not expanded');
    expect(deep).not.toContain('$ref');
  });

  it('reports a schema that is not an object, with its pointer', () => {
    const error = (() => {
      try {
        convert({ type: 'object', properties: { a: 5 } });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(OpenApiSpecError.isInstance(error) && error.pointer).toBe('#/test/properties/a');
  });
});
