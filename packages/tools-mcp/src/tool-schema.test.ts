import { describe, expect, it } from 'vitest';
import { outputSearchText, toToolParameters } from './tool-schema.js';

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

describe('outputSearchText', () => {
  it('names the fields two levels deep, breadth first, through refs, arrays and branches', () => {
    expect(
      outputSearchText({
        type: 'object',
        properties: {
          total: { type: 'integer' },
          worklogs: { type: 'array', items: { $ref: '#/definitions/worklog' } },
          extra: { anyOf: [{ type: 'object', properties: { note: {} } }, { type: 'null' }] },
        },
        definitions: {
          worklog: {
            allOf: [
              { type: 'object', properties: { timeSpent: {} } },
              {
                type: 'object',
                properties: { author: { type: 'object', properties: { deep: {} } } },
              },
            ],
          },
        },
      })?.split('\n'),
    ).toEqual(['total', 'worklogs', 'extra', 'timeSpent', 'author', 'note']);
  });

  it.each([
    ['nothing', undefined],
    ['a string', 'object'],
    ['an array', [{ properties: { a: {} } }]],
    ['no properties', { type: 'object' }],
    ['a non-object type', { type: 'string' }],
    ['properties that are not an object', { type: 'object', properties: ['a'] }],
    ['a broken reference', { $ref: '#/$defs/missing' }],
    ['a self-reference', { $ref: '#' }],
  ])('is undefined for %s', (_what, schema) => {
    expect(outputSearchText(schema)).toBeUndefined();
  });

  it('stays bounded on a huge or recursive schema', () => {
    const wide = Object.fromEntries(
      Array.from({ length: 400 }, (_, at) => [
        `a_rather_long_field_name_${at}`,
        { properties: { x: {} } },
      ]),
    );
    const text = outputSearchText({ type: 'object', properties: wide }) ?? '';
    expect(text.length).toBeLessThanOrEqual(1200);
    expect(text.split('\n')).toContain('a_rather_long_field_name_0');
    expect(text.split('\n')).not.toContain('a_rather_long_field_name_60');
    const recursive = outputSearchText({
      type: 'object',
      properties: { node: { $ref: '#/$defs/node' } },
      $defs: {
        node: { type: 'object', properties: { child: { $ref: '#/$defs/node' }, value: {} } },
      },
    });
    expect(recursive?.split('\n')).toEqual(['node', 'child', 'value']);
  });
});
