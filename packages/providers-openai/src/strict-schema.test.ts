import {
  Agent,
  defineTool,
  type JsonSchema,
  type JsonSchemaObject,
  validateWithZod,
} from '@agent/core';
import {
  closeWireServers,
  SSE_HEADERS,
  sseEvents,
  startWireServer,
  type WireServer,
} from '@agent/tooling-wire-server';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { mapStrictArguments } from './openai-tools.js';
import {
  matchesStrictSchema,
  planHasMap,
  stripAbsentNulls,
  toStrictSchema,
} from './strict-schema.js';
import { openaiAt } from './test-helpers.js';

let server: WireServer | undefined;
afterEach(closeWireServers);

const searchInput = z.object({
  query: z.string().describe('What to look for'),
  limit: z.number().int().optional(),
  mode: z.enum(['fast', 'thorough']).optional(),
  tags: z.array(z.string()),
  filter: z
    .object({
      from: z.string().optional(),
      to: z.string(),
      sort: z.object({ field: z.enum(['date', 'score']), descending: z.boolean().optional() }),
    })
    .optional(),
  target: z.union([
    z.object({ kind: z.literal('file'), path: z.string() }),
    z.object({ kind: z.literal('url'), url: z.string(), depth: z.number().optional() }),
  ]),
  note: z.string().nullable().optional(),
});

/** Checks the strict-mode rules on every node: closed objects with every property required. */
function assertStrictEverywhere(schema: JsonSchema, path = '#'): void {
  if (schema.type === 'object') {
    expect(schema.additionalProperties, path).toBe(false);
    expect([...(schema.required ?? [])].sort(), path).toEqual(
      Object.keys(schema.properties ?? {}).sort(),
    );
  }
  for (const [key, child] of Object.entries(schema.properties ?? {}))
    assertStrictEverywhere(child, `${path}/properties/${key}`);
  if (schema.items !== undefined && !Array.isArray(schema.items))
    assertStrictEverywhere(schema.items, `${path}/items`);
  for (const [index, branch] of (schema.anyOf ?? []).entries())
    assertStrictEverywhere(branch, `${path}/anyOf/${index}`);
  expect(schema.oneOf, path).toBeUndefined();
}

function nest(levels: number): JsonSchemaObject {
  let schema: JsonSchemaObject = { type: 'object', properties: { leaf: { type: 'string' } } };
  for (let level = 0; level < levels; level++)
    schema = { type: 'object', properties: { child: schema } };
  return schema;
}

describe('toStrictSchema', () => {
  it('converts a schema with optionals, nesting, enums, arrays and a union', () => {
    const tool = defineTool({
      name: 'search',
      description: 'd',
      input: searchInput,
      execute: async () => '',
    });
    const result = toStrictSchema(tool.parameters);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    assertStrictEverywhere(result.schema);
    const properties = result.schema.properties ?? {};
    expect(properties.limit).toEqual({ type: ['integer', 'null'] });
    expect(properties.mode).toEqual({ type: ['string', 'null'], enum: ['fast', 'thorough', null] });
    expect(properties.query).toEqual({ type: 'string', description: 'What to look for' });
    expect(properties.filter?.anyOf?.[1]).toEqual({ type: 'null' });
    // Already nullable: left alone (a null there is a real null).
    expect(properties.note).toEqual({ type: ['string', 'null'] });
  });

  it('refuses what strict mode cannot express, with a reason', () => {
    const cases: Array<[JsonSchemaObject, RegExp]> = [
      [
        {
          type: 'object',
          properties: { m: { type: 'object', additionalProperties: {} } },
        },
        /open object|propertyNames|additionalProperties/,
      ],
      [
        {
          type: 'object',
          properties: {
            m: {
              type: 'object',
              properties: { a: { type: 'string' } },
              additionalProperties: { type: 'number' },
            },
          },
        },
        /open object/,
      ],
      [{ type: 'object', properties: { any: {} } }, /accepts any value/],
      [{ type: 'object', properties: { s: { type: 'string', not: { const: 'x' } } } }, /"not"/],
      [{ type: 'object', properties: { o: { type: 'object' } } }, /without "properties"/],
      [{ type: 'object', additionalProperties: true }, /open object/],
      [nest(11), /nested deeper than 10/],
    ];
    for (const [schema, reason] of cases) {
      const result = toStrictSchema(schema);
      expect(result.ok, JSON.stringify(schema)).toBe(false);
      if (!result.ok) expect(result.reason).toMatch(reason);
    }
  });

  it('keeps a tool strict by moving constraints it cannot carry into the description', () => {
    const schema: JsonSchemaObject = {
      type: 'object',
      properties: {
        id: { type: 'string', minLength: 1, maxLength: 34, description: 'The SID.' },
        site: { type: 'string', format: 'uri' },
        tags: { type: 'array', items: { type: 'string' }, uniqueItems: true },
        amount: { type: 'integer', format: 'int64', 'x-stripe-bypass': true, example: 5 },
        when: { type: 'string', format: 'date-time' },
      },
      required: ['id'],
    };
    const result = toStrictSchema(schema);
    if (!result.ok) throw new Error(result.reason);
    const properties = result.schema.properties as Record<string, JsonSchemaObject>;
    expect(properties.id).toEqual({
      type: 'string',
      description: 'The SID. (minLength: 1; maxLength: 34)',
    });
    expect(properties.site?.description).toBe('(format: uri)');
    expect(properties.site?.format).toBeUndefined();
    expect(properties.tags?.description).toBe('(uniqueItems: true)');
    expect(properties.amount?.description).toBe('(format: int64)');
    expect(properties.when).toEqual({ type: ['string', 'null'], format: 'date-time' });
    // The original is untouched: the loop still validates against it.
    expect((schema.properties as Record<string, JsonSchemaObject>).id?.minLength).toBe(1);
  });

  it('sends a typed map as {key, value} entries and turns them back into the object', () => {
    // Stripe's metadata: a map of strings, or "" to clear it.
    const metadata: JsonSchema = {
      anyOf: [
        { type: 'object', additionalProperties: { type: 'string' } },
        { type: 'string', enum: [''] },
      ],
    };
    const result = toStrictSchema({
      type: 'object',
      properties: {
        metadata,
        limits: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            properties: { max: { type: 'integer' } },
          },
        },
      },
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const entries = {
      type: 'array',
      items: {
        type: 'object',
        properties: { key: { type: 'string' }, value: { type: 'string' } },
        required: ['key', 'value'],
        additionalProperties: false,
      },
    };
    expect(result.schema.properties?.metadata).toEqual({
      anyOf: [
        { ...entries, description: 'A map: one {key, value} entry per key.' },
        { type: 'string', enum: [''] },
        { type: 'null' },
      ],
    });
    const wire = {
      metadata: [
        { key: 'order_id', value: '6735' },
        { key: 'channel', value: 'web' },
      ],
      limits: [{ key: 'daily', value: { max: null } }],
    };
    expect(planHasMap(result.plan)).toBe(true);
    expect(stripAbsentNulls(wire, result.plan)).toEqual({
      metadata: { order_id: '6735', channel: 'web' },
      limits: { daily: {} },
    });
    expect(stripAbsentNulls({ metadata: '', limits: null }, result.plan)).toEqual({
      metadata: '',
    });
    // Raw argument text is mapped even without any null in it.
    expect(
      JSON.parse(mapStrictArguments('{"metadata":[{"key":"a","value":"b"}]}', result.plan)),
    ).toEqual({ metadata: { a: 'b' } });
  });

  it('a type named like an Object.prototype property is refused with a reason, not a throw', () => {
    for (const type of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      const result = toStrictSchema({
        type: 'object',
        properties: { a: { type, minimum: 1 }, b: { type: [type, 'null'], pattern: 'x' } },
        required: ['a', 'b'],
      } as Parameters<typeof toStrictSchema>[0]);
      expect(result.ok).toBe(false);
    }
  });

  describe('properties named like Object.prototype members (a tool schema is JSON from a server)', () => {
    // As text, so `__proto__` is a key of the schema and of the arguments, as JSON.parse makes it.
    const schema = JSON.parse(`{
      "type": "object",
      "properties": {
        "__proto__": { "type": "object", "properties": { "x": { "type": "string" } }, "required": ["x"] },
        "constructor": { "type": "string" },
        "toString": { "type": "string" },
        "plain": { "type": "string" }
      },
      "required": ["__proto__", "constructor"]
    }`) as JsonSchemaObject;
    const names = ['__proto__', 'constructor', 'toString', 'plain'];

    it('are kept as properties, all required, the optional ones nullable', () => {
      const result = toStrictSchema(schema);
      if (!result.ok) throw new Error(result.reason);
      const properties = result.schema.properties ?? {};
      expect(Object.getPrototypeOf(properties)).toBe(Object.prototype);
      for (const name of names) expect(Object.hasOwn(properties, name)).toBe(true);
      expect(result.schema.required).toEqual(names);
      expect(Object.getOwnPropertyDescriptor(properties, '__proto__')?.value).toMatchObject({
        type: 'object',
        required: ['x'],
      });
      expect(Object.getOwnPropertyDescriptor(properties, 'toString')?.value).toEqual({
        type: ['string', 'null'],
      });
    });

    it('arguments keep them as fields after the nulls are stripped', () => {
      const result = toStrictSchema(schema);
      if (!result.ok) throw new Error(result.reason);
      const wire = JSON.parse(
        '{"__proto__": {"x": "1"}, "constructor": "c", "toString": null, "plain": null}',
      );
      const stripped = stripAbsentNulls(wire, result.plan) as Record<string, unknown>;
      expect(Object.getPrototypeOf(stripped)).toBe(Object.prototype);
      expect(JSON.stringify(stripped)).toBe('{"__proto__":{"x":"1"},"constructor":"c"}');
      expect(JSON.parse(mapStrictArguments(JSON.stringify(wire), result.plan))).toEqual(
        JSON.parse('{"__proto__": {"x": "1"}, "constructor": "c"}'),
      );
    });

    it('a union branch is picked by own properties only', () => {
      const object: JsonSchema = { type: 'object', properties: { a: { type: 'string' } } };
      expect(matchesStrictSchema(JSON.parse('{"a": "x", "constructor": "y"}'), object)).toBe(false);
      expect(matchesStrictSchema({}, { ...object, required: ['toString'] })).toBe(false);
      expect(matchesStrictSchema({ a: 'x' }, object)).toBe(true);
    });
  });

  it('deduplicates enum values', () => {
    const result = toStrictSchema({
      type: 'object',
      properties: { s: { type: 'string', enum: ['a', 'b', 'a'] } },
      required: ['s'],
    });
    if (!result.ok) throw new Error(result.reason);
    expect((result.schema.properties as Record<string, { enum?: unknown[] }>).s?.enum).toEqual([
      'a',
      'b',
    ]);
  });

  it('keeps a null the original schema accepts (null is then ambiguous, so it stays)', () => {
    const schema: JsonSchemaObject = {
      type: 'object',
      properties: { a: { type: ['string', 'null'] } },
    };
    const result = toStrictSchema(schema);
    if (!result.ok) throw new Error(result.reason);
    expect(stripAbsentNulls({ a: null }, result.plan)).toEqual({ a: null });
  });
});

describe('the strict dialect on the wire', () => {
  it('sends the zod schema strict and maps the nulls of the answer back before validation', async () => {
    const rawArguments = JSON.stringify({
      query: 'agents',
      limit: null,
      mode: 'fast',
      tags: ['a', 'b'],
      filter: { from: null, to: '2025-01-01', sort: { field: 'date', descending: null } },
      target: { kind: 'url', url: 'https://example.com', depth: null },
      note: null,
    });
    const chunk = (delta: unknown, finish: string | null = null) => ({
      data: {
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'gpt-4o',
        choices: [{ index: 0, delta, finish_reason: finish }],
      },
    });
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: sseEvents([
          chunk({
            role: 'assistant',
            tool_calls: [
              {
                index: 0,
                id: 'call_1',
                type: 'function',
                function: { name: 'search', arguments: '' },
              },
            ],
          }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: rawArguments.slice(0, 40) } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: rawArguments.slice(40) } }] }),
          chunk({}, 'tool_calls'),
          { data: '[DONE]' },
        ]),
      },
      {
        headers: SSE_HEADERS,
        body: sseEvents([
          chunk({ role: 'assistant', content: 'ok' }),
          chunk({}, 'stop'),
          { data: '[DONE]' },
        ]),
      },
    ]);
    const received: unknown[] = [];
    const tool = defineTool({
      name: 'search',
      description: 'Search things',
      input: searchInput,
      execute: async (args) => {
        received.push(args);
        return 'found';
      },
    });
    const result = await new Agent({
      provider: openaiAt(server.url, { api: 'chat' }),
      model: 'gpt-4o',
      tools: [tool],
    }).run('go').result;
    expect(result.stopReason).toBe('completed');

    const body = server.requests[0]?.json as
      | { tools: Array<{ function: { strict: boolean; parameters: JsonSchema } }> }
      | undefined;
    const sent = body?.tools[0]?.function;
    expect(sent?.strict).toBe(true);
    if (sent === undefined) return;
    assertStrictEverywhere(sent.parameters);
    // The model's answer fits the strict schema the server received ...
    expect(matchesStrictSchema(JSON.parse(rawArguments), sent.parameters)).toBe(true);
    // ... and what the tool got validates against the original zod schema, absent fields absent.
    const expected = {
      query: 'agents',
      mode: 'fast',
      tags: ['a', 'b'],
      filter: { to: '2025-01-01', sort: { field: 'date' } },
      target: { kind: 'url', url: 'https://example.com' },
      note: null,
    };
    expect(received).toEqual([expected]);
    expect(validateWithZod(searchInput, expected).ok).toBe(true);
  });

  it('falls back to non-strict for a schema strict mode cannot express, warning once', async () => {
    const answer = {
      headers: SSE_HEADERS,
      body: sseEvents([
        {
          data: {
            id: 'c',
            object: 'chat.completion.chunk',
            created: 1,
            model: 'gpt-4o',
            choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }],
          },
        },
        { data: '[DONE]' },
      ]),
    };
    server = await startWireServer([answer]);
    const warnings: string[] = [];
    const provider = openaiAt(server.url, {
      api: 'chat',
      onWarning: (message) => warnings.push(message),
    });
    const open = defineTool({
      name: 'set_env',
      description: 'Set variables',
      input: z.object({ vars: z.record(z.string(), z.string()) }),
      execute: async () => '',
    });
    const closed = defineTool({
      name: 'ping',
      description: 'p',
      input: z.object({}),
      execute: async () => '',
    });
    const agent = new Agent({ provider, model: 'gpt-4o', tools: [open, closed] });
    await agent.run('a').result;
    await agent.run('b').result;

    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/Tool "set_env" is sent without strict mode/);
    for (const request of server.requests) {
      const tools = (
        request.json as {
          tools: Array<{ function: { name: string; strict?: boolean; parameters: unknown } }>;
        }
      ).tools;
      expect(tools.map((entry) => [entry.function.name, entry.function.strict])).toEqual([
        ['set_env', undefined],
        ['ping', true],
      ]);
      expect(tools[0]?.function.parameters).toEqual(open.parameters);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Property tests: the null-stripping round trip.

/** A generated schema together with a generator of (original value, value as a strict model sends it). */
interface Case {
  schema: JsonSchema;
  values: fc.Arbitrary<{ original: unknown; wire: unknown }>;
}

const leafCases: fc.Arbitrary<Case> = fc.constantFrom<Case>(
  { schema: { type: 'string' }, values: fc.string().map((v) => ({ original: v, wire: v })) },
  { schema: { type: 'integer' }, values: fc.integer().map((v) => ({ original: v, wire: v })) },
  { schema: { type: 'boolean' }, values: fc.boolean().map((v) => ({ original: v, wire: v })) },
  {
    schema: { type: 'string', enum: ['a', 'b', 'c'] },
    values: fc.constantFrom('a', 'b', 'c').map((v) => ({ original: v, wire: v })),
  },
  {
    schema: { type: ['string', 'null'] },
    values: fc.option(fc.string(), { nil: null }).map((v) => ({ original: v, wire: v })),
  },
);

const caseArb: fc.Arbitrary<Case> = fc.letrec<{ node: Case }>((tie) => ({
  node: fc.oneof(
    { maxDepth: 3, depthSize: 'small', withCrossShrink: true },
    leafCases,
    tie('node').map((items) => ({
      schema: { type: 'array', items: items.schema },
      values: fc.array(items.values, { maxLength: 3 }).map((list) => ({
        original: list.map((item) => item.original),
        wire: list.map((item) => item.wire),
      })),
    })),
    fc
      .uniqueArray(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd', 'e'), tie('node'), fc.boolean()), {
        selector: ([key]) => key,
        maxLength: 4,
      })
      .map((entries) => objectCase(entries)),
    fc
      .array(
        fc.uniqueArray(fc.tuple(fc.constantFrom('x', 'y', 'z'), tie('node'), fc.boolean()), {
          selector: ([key]) => key,
          maxLength: 3,
        }),
        { minLength: 2, maxLength: 3 },
      )
      .map((branches) => unionCase(branches)),
  ),
})).node;

function objectCase(entries: Array<[string, Case, boolean]>, kind?: string): Case {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [key, child, isRequired] of entries) {
    properties[key] = child.schema;
    if (isRequired) required.push(key);
  }
  if (kind !== undefined) {
    properties.kind = { type: 'string', const: kind };
    required.push('kind');
  }
  const schema: JsonSchema = { type: 'object', properties, required };
  const values = fc
    .tuple(
      ...entries.map(([key, child, isRequired]) => {
        const nullable = Array.isArray(child.schema.type) && child.schema.type.includes('null');
        // An optional property whose schema already accepts null is ambiguous when absent;
        // generate it present only.
        const present = isRequired || nullable ? fc.constant(true) : fc.boolean();
        return fc.tuple(fc.constant(key), present, child.values);
      }),
    )
    .map((fields) => {
      const original: Record<string, unknown> = {};
      const wire: Record<string, unknown> = {};
      for (const [key, present, value] of fields) {
        if (present) {
          original[key] = value.original;
          wire[key] = value.wire;
        } else {
          wire[key] = null;
        }
      }
      if (kind !== undefined) {
        original.kind = kind;
        wire.kind = kind;
      }
      return { original, wire };
    });
  return { schema, values };
}

function unionCase(branches: Array<Array<[string, Case, boolean]>>): Case {
  // Distinct `kind` constants keep the branches apart, as a discriminated union does.
  const cases = branches.map((entries, index) => objectCase(entries, `k${index}`));
  return {
    schema: { anyOf: cases.map((entry) => entry.schema) },
    values: fc.oneof(...cases.map((entry) => entry.values)),
  };
}

const rootArb = fc
  .uniqueArray(fc.tuple(fc.constantFrom('p', 'q', 'r', 's'), caseArb, fc.boolean()), {
    selector: ([key]) => key,
    maxLength: 4,
  })
  .map((entries) => objectCase(entries));

describe('null-stripping round trip (property)', () => {
  it('every generated schema converts, the wire value fits it, and stripping restores the original', () => {
    fc.assert(
      fc.property(
        rootArb.chain((root) => fc.tuple(fc.constant(root.schema), root.values)),
        ([schema, { original, wire }]) => {
          const result = toStrictSchema(schema as JsonSchemaObject);
          if (!result.ok) throw new Error(result.reason);
          assertStrictEverywhere(result.schema);
          expect(matchesStrictSchema(wire, result.schema)).toBe(true);
          expect(stripAbsentNulls(wire, result.plan)).toEqual(original);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('stripping a value that has no absent-meaning nulls changes nothing', () => {
    fc.assert(
      fc.property(
        rootArb.chain((root) => fc.tuple(fc.constant(root.schema), root.values)),
        ([schema, { original }]) => {
          const result = toStrictSchema(schema as JsonSchemaObject);
          if (!result.ok) throw new Error(result.reason);
          expect(stripAbsentNulls(original, result.plan)).toEqual(original);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('conversion never mutates its input', () => {
    fc.assert(
      fc.property(rootArb, (root) => {
        const before = structuredClone(root.schema);
        toStrictSchema(root.schema as JsonSchemaObject);
        expect(root.schema).toEqual(before);
      }),
      { numRuns: 100 },
    );
  });
});
