import { describe, expect, it } from 'vitest';
import type { JsonSchema } from './json-schema.js';
import { repairPattern } from './json-schema-repair.js';
import { jsonSchemaValidationProblem, validateWithJsonSchema } from './json-schema-validation.js';
import { formatValidationIssues } from './validation.js';

const draft2020 = 'https://json-schema.org/draft/2020-12/schema';
const draft7 = 'http://json-schema.org/draft-07/schema#';

/** [what, schema of a `v` field (or the whole object with `root`), [value, valid][]] */
type Case = [string, Record<string, unknown>, [unknown, boolean][]];

// Keywords the old zod-based checker silently skipped or got wrong are all here.
const fieldCases: Case[] = [
  [
    'if/then/else',
    {
      type: 'object',
      if: { properties: { k: { const: 'a' } } },
      // biome-ignore lint/suspicious/noThenProperty: the if/then/else keyword of JSON Schema
      then: { required: ['a'] },
      else: { required: ['b'] },
    },
    [
      [{ k: 'a', a: 1 }, true],
      [{ k: 'a' }, false],
      [{ k: 'x', b: 1 }, true],
      [{ k: 'x' }, false],
    ],
  ],
  [
    'dependentRequired',
    { type: 'object', dependentRequired: { card: ['cvv'] } },
    [
      [{ card: 1, cvv: 2 }, true],
      [{ card: 1 }, false],
      [{}, true],
    ],
  ],
  [
    'dependentSchemas',
    { type: 'object', dependentSchemas: { card: { required: ['cvv'] } } },
    [
      [{ card: 1, cvv: 2 }, true],
      [{ card: 1 }, false],
    ],
  ],
  [
    'patternProperties',
    {
      type: 'object',
      patternProperties: { '^x-': { type: 'string' } },
      additionalProperties: false,
    },
    [
      [{ 'x-a': 's' }, true],
      [{ 'x-a': 1 }, false],
      [{ y: 's' }, false],
    ],
  ],
  [
    'unicode pattern',
    { type: 'string', pattern: '^\\p{Lu}\\p{Ll}+$' },
    [
      ['Émile', true],
      ['émile', false],
      ['p{Lu}', false],
    ],
  ],
  [
    'length in code points',
    { type: 'string', minLength: 2, maxLength: 2 },
    [
      ['😀😀', true],
      ['😀', false],
    ],
  ],
  [
    'format email',
    { type: 'string', format: 'email' },
    [
      ['a@b.co', true],
      ['nope', false],
    ],
  ],
  [
    'format date-time',
    { type: 'string', format: 'date-time' },
    [
      ['2026-11-24T10:00:00Z', true],
      ['yesterday', false],
    ],
  ],
  [
    'format date',
    { type: 'string', format: 'date' },
    [
      ['2026-11-24', true],
      ['2026-13-40', false],
    ],
  ],
  [
    'format uri',
    { type: 'string', format: 'uri' },
    [
      ['https://x.y/z', true],
      ['not a uri', false],
    ],
  ],
  [
    'format uuid',
    { type: 'string', format: 'uuid' },
    [
      ['123e4567-e89b-12d3-a456-426614174000', true],
      ['123', false],
    ],
  ],
  [
    'format ipv4',
    { type: 'string', format: 'ipv4' },
    [
      ['10.0.0.1', true],
      ['10.0.0.256', false],
    ],
  ],
  ['unknown format is not enforced', { type: 'string', format: 'int32-ish' }, [['x', true]]],
  [
    'prefixItems',
    { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false },
    [
      [['a', 1], true],
      [['a', 'b'], false],
      [['a', 1, 2], false],
    ],
  ],
  [
    'unevaluatedProperties',
    {
      type: 'object',
      properties: { a: {} },
      allOf: [{ properties: { b: {} } }],
      unevaluatedProperties: false,
    },
    [
      [{ a: 1, b: 2 }, true],
      [{ a: 1, c: 3 }, false],
    ],
  ],
  [
    'multipleOf with decimals',
    { type: 'number', multipleOf: 0.01 },
    [
      [0.07, true],
      [0.075, false],
    ],
  ],
  [
    'oneOf is exclusive',
    { oneOf: [{ type: 'integer' }, { type: 'number', minimum: 2 }] },
    [
      [1, true],
      [2, false],
      [2.5, true],
    ],
  ],
  [
    'propertyNames',
    { type: 'object', propertyNames: { pattern: '^[a-z]+$' } },
    [
      [{ ab: 1 }, true],
      [{ Ab: 1 }, false],
    ],
  ],
  [
    'contains/minContains',
    { type: 'array', contains: { const: 1 }, minContains: 2 },
    [
      [[1, 1], true],
      [[1, 2], false],
    ],
  ],
  [
    'const compares deeply',
    { const: { a: [1, 2] } },
    [
      [{ a: [1, 2] }, true],
      [{ a: [2, 1] }, false],
    ],
  ],
  [
    'uniqueItems compares deeply',
    { type: 'array', uniqueItems: true },
    [
      [[{ a: 1 }, { a: 2 }], true],
      [[{ a: 1 }, { a: 1 }], false],
    ],
  ],
  [
    'nullable union',
    { type: ['string', 'null'] },
    [
      [null, true],
      ['s', true],
      [3, false],
    ],
  ],
  [
    'draft-4 boolean exclusiveMinimum',
    { type: 'number', minimum: 0, exclusiveMinimum: true },
    [
      [1, true],
      [0, false],
    ],
  ],
  [
    'extensions are ignored',
    { type: 'string', 'x-foo': 1, example: 3, discriminator: {} },
    [
      ['s', true],
      [1, false],
    ],
  ],
];

function wrap(schema: Record<string, unknown>, dialect = draft2020): JsonSchema {
  return { $schema: dialect, type: 'object', properties: { v: schema }, required: ['v'] };
}

describe('validateWithJsonSchema: the keywords', () => {
  for (const [what, schema, checks] of fieldCases) {
    it(what, () => {
      const tool = wrap(schema);
      for (const [value, valid] of checks) {
        const result = validateWithJsonSchema(tool, { v: value });
        expect({ value, ok: result.ok }).toEqual({ value, ok: valid });
      }
    });
  }

  it('$defs and recursive references', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: { tree: { $ref: '#/$defs/node' } },
      $defs: {
        node: {
          type: 'object',
          properties: {
            v: { type: 'number' },
            kids: { type: 'array', items: { $ref: '#/$defs/node' } },
          },
        },
      },
    };
    expect(validateWithJsonSchema(schema, { tree: { v: 1, kids: [{ v: 2 }] } }).ok).toBe(true);
    const bad = validateWithJsonSchema(schema, { tree: { kids: [{ v: 'x' }] } });
    expect(bad.ok ? '' : formatValidationIssues(bad.issues)).toBe(
      'at "tree.kids[0].v": expected number, received string "x"',
    );
  });

  it('draft-07: definitions, dependencies and tuple items', () => {
    const schema: JsonSchema = {
      $schema: draft7,
      type: 'object',
      properties: {
        a: { $ref: '#/definitions/n' },
        t: { type: 'array', items: [{ type: 'string' }], additionalItems: false },
      },
      definitions: { n: { type: 'integer' } },
      dependencies: { a: ['b'] },
    };
    expect(validateWithJsonSchema(schema, { a: 1, b: 1, t: ['x'] }).ok).toBe(true);
    expect(validateWithJsonSchema(schema, { a: 1.5, b: 1 }).ok).toBe(false);
    expect(validateWithJsonSchema(schema, { a: 1 }).ok).toBe(false);
    expect(validateWithJsonSchema(schema, { t: ['x', 'y'] }).ok).toBe(false);
  });

  it('the arguments must be an object', () => {
    const schema: JsonSchema = { type: 'object', properties: {} };
    for (const value of [['a'], null, 'x', 3]) {
      const result = validateWithJsonSchema(schema, value);
      expect(result.ok).toBe(false);
      expect(result.ok ? '' : formatValidationIssues(result.issues)).toMatch(
        /^at "\(root\)": expected object, received /,
      );
    }
  });

  it('does not change the value it accepts', () => {
    const value = { v: { a: [1, 2] }, extra: true };
    const result = validateWithJsonSchema(wrap({ type: 'object' }), value);
    expect(result).toEqual({ ok: true, value });
    expect(result.ok && result.value).toBe(value);
  });
});

describe('validateWithJsonSchema: the errors a model reads', () => {
  const schema: JsonSchema = {
    type: 'object',
    required: ['path'],
    additionalProperties: false,
    properties: {
      path: { type: 'string' },
      limit: { type: 'number', minimum: 1, maximum: 100 },
      mode: { enum: ['fast', 'slow'] },
      items: {
        type: 'array',
        maxItems: 2,
        items: { type: 'object', properties: { name: { type: 'string', minLength: 2 } } },
      },
      id: { oneOf: [{ type: 'string', format: 'uuid' }, { type: 'integer' }] },
      when: { type: 'string', format: 'date' },
      card: { type: 'string', pattern: '^\\d{4}$' },
      cvv: { type: 'string' },
      flag: { type: 'boolean' },
      filter: { type: 'object' },
    },
    dependentRequired: { card: ['cvv'] },
  };
  const message = (value: unknown): string => {
    const result = validateWithJsonSchema(schema, value);
    return result.ok ? 'ok' : formatValidationIssues(result.issues);
  };

  it('names the field, what was expected and what was received, with a hint', () => {
    expect(message({ path: 'a', limit: '50' })).toBe(
      'at "limit": expected number, received string "50" (hint: send 50 as a number, without quotes)',
    );
    expect(message({ path: 'a', flag: 'true' })).toBe(
      'at "flag": expected boolean, received string "true" (hint: send true as a boolean, without quotes)',
    );
    expect(message({ path: 'a', filter: '{"a":1}' })).toBe(
      'at "filter": expected object, received string "{\\"a\\":1}" (hint: send the object itself, not a JSON string)',
    );
  });

  it('reports every problem at once, each at its own path', () => {
    expect(message({ limit: 0, mode: 'quick', items: [{ name: 'a' }], extra: 1, other: 2 })).toBe(
      [
        'at "path": required string is missing',
        'at "limit": expected a number >= 1, received number 0',
        'at "mode": expected one of "fast", "slow", received string "quick"',
        'at "items[0].name": expected at least 2 characters, received string "a"',
        'at "(root)": unknown fields "extra", "other"',
      ].join('; '),
    );
  });

  it('summarises alternatives, formats, patterns and dependencies', () => {
    expect(message({ path: 'a', id: 1.5 })).toBe(
      'at "id": matches none of the allowed shapes (expected string | expected integer), received number 1.5',
    );
    expect(message({ path: 'a', when: 'tomorrow' })).toBe(
      'at "when": expected a date string, received string "tomorrow"',
    );
    expect(message({ path: 'a', card: '12345', cvv: '1' })).toBe(
      'at "card": expected a string matching /^\\d{4}$/, received string "12345"',
    );
    expect(message({ path: 'a', card: '1234' })).toBe(
      'at "cvv": required when "card" is given, but missing',
    );
    expect(message({ path: 'a', items: [{}, {}, {}] })).toBe(
      'at "items": expected at most 2 items, received array of 3',
    );
  });

  it('does not call a field that failed its own schema "unknown" (unevaluatedProperties)', () => {
    const strict: JsonSchema = {
      type: 'object',
      properties: { n: { type: 'integer' } },
      unevaluatedProperties: false,
    };
    const result = validateWithJsonSchema(strict, { n: 'x', m: 1 });
    expect(result.ok ? '' : formatValidationIssues(result.issues)).toBe(
      'at "n": expected integer, received string "x"; at "(root)": unknown field "m"',
    );
  });
});

describe('schemas a validator would refuse are repaired and reported, never fatal', () => {
  it('rewrites escapes the u flag refuses, keeping the meaning', () => {
    expect(repairPattern('^[a-z]+\\:\\d+$')).toBe('^[a-z]+:\\d+$');
    expect(repairPattern('^\\p{L}+$')).toBe('^\\p{L}+$');
    expect(repairPattern('(?i)^abc$')).toBeUndefined();
    const schema: JsonSchema = wrap({ type: 'string', pattern: '^[a-z]+\\:\\d+$' });
    expect(validateWithJsonSchema(schema, { v: 'ab:12' }).ok).toBe(true);
    expect(validateWithJsonSchema(schema, { v: 'ab12' }).ok).toBe(false);
    expect(jsonSchemaValidationProblem(schema)).toBeUndefined();
  });

  it('drops what cannot be enforced, says so, and enforces the rest', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        name: { type: 'string', pattern: '(?i)^abc$', maxLength: 5 },
        file: { type: 'file' },
        ref: { $ref: '#/components/schemas/Missing', type: 'integer' },
        kind: { type: 'string', enum: ['a', 'a', 'b'] },
        required: { type: 'string', pattern: '(?<=x' },
      },
      required: ['kind'],
    };
    const problem = jsonSchemaValidationProblem(schema) ?? '';
    expect(problem).toContain('#/properties/name/pattern: /(?i)^abc$/ is not an ECMAScript');
    expect(problem).toContain('#/properties/file/type: unknown type "file"');
    expect(problem).toContain(
      '#/properties/ref/$ref: "#/components/schemas/Missing" cannot be resolved',
    );
    expect(problem).toContain('#/properties/required/pattern');
    expect(validateWithJsonSchema(schema, { kind: 'a', name: 'ABC', file: 3, ref: 2 }).ok).toBe(
      true,
    );
    expect(validateWithJsonSchema(schema, { kind: 'c' }).ok).toBe(false);
    expect(validateWithJsonSchema(schema, { kind: 'a', name: 'abcdef' }).ok).toBe(false);
    expect(validateWithJsonSchema(schema, { kind: 'a', ref: 'x' }).ok).toBe(false);
    // The tool's own schema object is never modified.
    expect((schema.properties as Record<string, { enum?: unknown[] }>).kind?.enum).toEqual([
      'a',
      'a',
      'b',
    ]);
  });

  it('treats property names that look like keywords as names', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        type: { type: 'string' },
        enum: { type: 'integer' },
        pattern: { type: 'string', pattern: '^a\\-b$' },
      },
      required: ['type'],
    };
    expect(jsonSchemaValidationProblem(schema)).toBeUndefined();
    expect(validateWithJsonSchema(schema, { type: 'x', enum: 1, pattern: 'a-b' }).ok).toBe(true);
    expect(validateWithJsonSchema(schema, { type: 1 }).ok).toBe(false);
    expect(validateWithJsonSchema(schema, { type: 'x', pattern: 'ab' }).ok).toBe(false);
  });

  it('compiles once per schema object', () => {
    const schema: JsonSchema = wrap({ type: 'string' });
    const first = jsonSchemaValidationProblem(schema);
    expect(validateWithJsonSchema(schema, { v: 's' }).ok).toBe(true);
    expect(jsonSchemaValidationProblem(schema)).toBe(first);
  });
});

describe('the tool schema itself', () => {
  it('is never modified, even when frozen', () => {
    const deepFreeze = <T>(value: T): T => {
      if (value !== null && typeof value === 'object') {
        for (const child of Object.values(value)) deepFreeze(child);
        Object.freeze(value);
      }
      return value;
    };
    const schema = deepFreeze({
      type: 'object' as const,
      properties: { a: { $ref: '#/$defs/n' } },
      $defs: { n: { type: 'integer' } },
    });
    const before = JSON.stringify(schema);
    expect(validateWithJsonSchema(schema, { a: 1 }).ok).toBe(true);
    expect(validateWithJsonSchema(schema, { a: 'x' }).ok).toBe(false);
    expect(Object.getOwnPropertyNames(schema.properties.a)).toEqual(['$ref']);
    expect(JSON.stringify(schema)).toBe(before);
  });
});

describe('through the loop', () => {
  it('a tool with a partly broken schema still runs, and the rest of its schema is enforced', async () => {
    const { Agent } = await import('./agent.js');
    const { createScriptedProvider } = await import('./testing/scripted-provider.js');
    const calls: unknown[] = [];
    const provider = createScriptedProvider([
      {
        toolCalls: [
          { id: 'a', name: 'charge', arguments: { card: '4242', cvv: '123', note: 'ok' } },
          { id: 'b', name: 'charge', arguments: { card: '4242' } },
          { id: 'c', name: 'charge', arguments: { card: 'x', cvv: '1' } },
        ],
      },
      { text: 'done' },
    ]);
    const agent = new Agent({
      provider,
      model: 'm',
      tools: [
        {
          name: 'charge',
          description: 'A vendor schema: a PCRE pattern, a dangling $ref, dependentRequired',
          parameters: {
            type: 'object',
            properties: {
              card: { type: 'string', pattern: '^\\d{4}$' },
              cvv: { type: 'string' },
              note: { type: 'string', pattern: '(?i)^ok$' },
              meta: { $ref: '#/components/schemas/Meta' },
            },
            dependentRequired: { card: ['cvv'] },
          },
          execute: async (args) => {
            calls.push(args);
            return { content: [{ type: 'text', text: 'charged' }] };
          },
        },
      ],
    });
    await agent.run('go').result;
    const results = agent.messages.filter((m) => m.role === 'toolResult');
    expect(results.map((m) => m.isError)).toEqual([false, true, true]);
    expect(JSON.stringify(results[1]?.content)).toContain(
      'at \\"cvv\\": required when \\"card\\" is given, but missing',
    );
    expect(JSON.stringify(results[2]?.content)).toContain(
      'at \\"card\\": expected a string matching',
    );
    expect(calls).toEqual([{ card: '4242', cvv: '123', note: 'ok' }]);
  });
});

// A field name with half of a UTF-16 pair (a model's JSON may hold `"\ud800"`): the validator
// cannot name its location and threw "URI malformed", reported as the schema's fault.
describe('a field name holding a lone surrogate', () => {
  const schema: JsonSchema = {
    type: 'object',
    properties: { filter: { type: 'object', additionalProperties: { type: 'string' } } },
  };

  it.each([
    ['at the top', { 'k\uD800': 'v' }, ['k\uD800']],
    ['nested', { filter: { '\uDC00x': 'v' } }, ['filter', '\uDC00x']],
    ['in an array item', { filter: { ok: 'v' }, list: [{ 'a\uDBFF': 1 }] }, ['list', 0, 'a\uDBFF']],
  ])('%s: an issue naming the field, not the schema', (_, value, path) => {
    const result = validateWithJsonSchema(
      {
        ...schema,
        additionalProperties: {
          type: 'array',
          items: { type: 'object', additionalProperties: { type: 'number' } },
        },
      } as JsonSchema,
      value,
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toEqual([
      { path, message: 'field name holds a lone UTF-16 surrogate (half of a character)' },
    ]);
  });

  it('a whole pair (an emoji) in a name is fine', () => {
    expect(validateWithJsonSchema(schema, { filter: { '😀': 'v' } }).ok).toBe(true);
  });
});
