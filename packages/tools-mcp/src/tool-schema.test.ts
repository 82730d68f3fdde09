import { describe, expect, it } from 'vitest';
import { toToolParameters } from './tool-schema.js';

describe('toToolParameters', () => {
  it('inlines local $refs and drops $schema and $defs', () => {
    expect(
      toToolParameters({
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: {
          owner: { $ref: '#/definitions/user' },
          tags: { type: 'array', items: { $ref: '#/$defs/tag' } },
        },
        definitions: { user: { type: 'object', properties: { login: { type: 'string' } } } },
        $defs: { tag: { type: 'string', enum: ['a', 'b'] } },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        owner: { type: 'object', properties: { login: { type: 'string' } } },
        tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
      },
    });
  });

  it('turns missing and non-object schemas into { type: "object" }', () => {
    expect(toToolParameters(undefined)).toEqual({ type: 'object' });
    expect(toToolParameters(null)).toEqual({ type: 'object' });
    expect(toToolParameters('string')).toEqual({ type: 'object' });
    expect(toToolParameters({ type: 'string' })).toEqual({ type: 'object' });
    expect(toToolParameters({ type: 'array', items: {} })).toEqual({ type: 'object' });
  });

  it('keeps object-like schemas that omit or widen the type', () => {
    expect(toToolParameters({ properties: { a: { type: 'number' } } })).toEqual({
      type: 'object',
      properties: { a: { type: 'number' } },
    });
    expect(toToolParameters({ type: ['object', 'null'], required: ['a'] })).toEqual({
      type: 'object',
      required: ['a'],
    });
  });

  it('replaces remote and broken references with "anything" rather than failing', () => {
    expect(
      toToolParameters({
        type: 'object',
        properties: {
          remote: { $ref: 'https://example.com/schema.json', description: 'kept' },
          broken: { $ref: '#/$defs/missing' },
          bad: { $ref: '#/%E0%A4%A' },
          good: { $ref: '#/$defs/n' },
        },
        $defs: { n: { type: 'number' } },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        remote: { description: 'kept' },
        broken: {},
        bad: {},
        good: { type: 'number' },
      },
    });
  });

  it('drops malformed properties and required', () => {
    expect(toToolParameters({ type: 'object', properties: [1], required: 'a' })).toEqual({
      type: 'object',
    });
  });

  it('cuts recursive references instead of looping', () => {
    const parameters = toToolParameters({
      type: 'object',
      properties: { node: { $ref: '#/$defs/node' } },
      $defs: { node: { type: 'object', properties: { child: { $ref: '#/$defs/node' } } } },
    });
    expect(parameters.properties?.node).toEqual({
      type: 'object',
      properties: { child: {} },
    });
  });
});
