import type { AnyAgentTool, JsonSchemaObject } from '@agent/core';
import fc from 'fast-check';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { callExpression, toolDeclaration, toolDeclarations } from './declarations.js';

function tool(name: string, parameters: JsonSchemaObject, description = 'A tool.'): AnyAgentTool {
  return { name, description, parameters, execute: async () => ({ content: [] }) };
}

/** TypeScript's own parser: the declarations must be valid TypeScript, whatever the schema held. */
function syntaxErrors(text: string): string[] {
  const file = ts.createSourceFile(
    'tools.d.ts',
    text,
    ts.ScriptTarget.ES2022,
    true,
    ts.ScriptKind.TS,
  );
  const diagnostics = (file as unknown as { parseDiagnostics: ts.Diagnostic[] }).parseDiagnostics;
  return diagnostics.map((diagnostic) =>
    ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'),
  );
}

/** The declaration with comments removed and whitespace collapsed, to compare types alone. */
function typeOnly(text: string): string {
  return text
    .replace(/\/\*\*[\s\S]*?\*\//g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

describe('toolDeclaration', () => {
  it.each([
    [
      { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      'f(args: { path: string; }): Promise<any>;',
    ],
    [
      { type: 'object', properties: { n: { type: 'integer' }, ok: { type: 'boolean' } } },
      'f(args?: { n?: number; ok?: boolean; }): Promise<any>;',
    ],
    [
      { type: 'object', properties: { mode: { enum: ['a', 'b'] } }, required: ['mode'] },
      'f(args: { mode: "a" | "b"; }): Promise<any>;',
    ],
    [
      {
        type: 'object',
        properties: { tags: { type: 'array', items: { type: ['string', 'null'] } } },
        required: ['tags'],
      },
      'f(args: { tags: (string | null)[]; }): Promise<any>;',
    ],
    [
      {
        type: 'object',
        properties: { v: { anyOf: [{ type: 'string' }, { type: 'number' }] } },
        required: ['v'],
      },
      'f(args: { v: string | number; }): Promise<any>;',
    ],
    [
      {
        type: 'object',
        properties: {
          v: {
            type: 'array',
            items: {
              anyOf: [
                { type: 'object', properties: { a: { const: 1 } }, required: ['a'] },
                { type: 'null' },
              ],
            },
          },
        },
        required: ['v'],
      },
      'f(args: { v: ({ a: 1; } | null)[]; }): Promise<any>;',
    ],
    [
      {
        type: 'object',
        properties: { m: { type: 'object', additionalProperties: { type: 'number' } } },
        required: ['m'],
      },
      'f(args: { m: { [key: string]: number; }; }): Promise<any>;',
    ],
    [
      { type: 'object', properties: { 'x-y': { type: 'string' } }, required: ['x-y'] },
      'f(args: { "x-y": string; }): Promise<any>;',
    ],
    [
      {
        type: 'object',
        properties: { t: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] } },
        required: ['t'],
      },
      'f(args: { t: [string, number]; }): Promise<any>;',
    ],
    [{ type: 'object', properties: { any: {} } }, 'f(args?: { any?: unknown; }): Promise<any>;'],
    [
      { type: 'object', properties: { s: { type: 'string', nullable: true } }, required: ['s'] },
      'f(args: { s: string | null; }): Promise<any>;',
    ],
    [{ type: 'object' }, 'f(args?: Record<string, unknown>): Promise<any>;'],
  ] as [JsonSchemaObject, string][])('%j', (parameters, expected) => {
    const text = toolDeclaration(tool('f', parameters));
    expect(typeOnly(text)).toBe(expected);
    expect(syntaxErrors(`declare const tools: {\n${text}\n};`)).toEqual([]);
  });

  it('puts descriptions, formats and defaults in comments, and a quoted key for a name that is not an identifier', () => {
    const text = toolDeclarations([
      tool(
        'github__list-issues',
        {
          type: 'object',
          properties: {
            state: { type: 'string', description: 'Which issues.', default: 'open' },
            since: { type: 'string', format: 'date-time' },
          },
        },
        'Lists issues.\nSecond line.',
      ),
    ]);
    expect(text).toContain('"github__list-issues"(args?: {');
    expect(text).toContain('/** Which issues. Default: "open". */');
    expect(text).toContain('/** Format: date-time. */');
    expect(text).toContain('   * Lists issues.\n   * Second line.');
    expect(callExpression('github__list-issues')).toBe('tools["github__list-issues"]');
    expect(callExpression('read_file')).toBe('tools.read_file');
  });

  it('shortens a long description and spells out nesting only to maxDepth', () => {
    const deep: JsonSchemaObject = { type: 'object', properties: {} };
    let level = deep;
    for (let index = 0; index < 12; index++) {
      const next: JsonSchemaObject = { type: 'object', properties: {} };
      (level.properties as Record<string, unknown>).child = next;
      level = next;
    }
    const text = toolDeclaration(tool('deep', deep, `${'Word. '.repeat(400)}`), { maxDepth: 3 });
    expect(text).toContain('child?: unknown;');
    expect(text.length).toBeLessThan(1_600);
    expect(text).toContain('…');
  });

  it('the syntax check catches broken declarations (so the property below can fail)', () => {
    expect(syntaxErrors('declare const tools: { f(args: { a: string }): Promise<any>; };')).toEqual(
      [],
    );
    expect(
      syntaxErrors('declare const tools: { f(args: { a: string | }): Promise<any>; };'),
    ).not.toEqual([]);
    expect(syntaxErrors('declare const tools: { /** a */ b */ f(): void; };')).not.toEqual([]);
  });

  it('gives valid TypeScript for any schema, name or description (property test)', () => {
    const text = fc.string({ maxLength: 30 });
    const leaf = fc.oneof(
      fc.constantFrom(
        { type: 'string' },
        { type: 'number' },
        { type: 'boolean' },
        { type: 'null' },
        {},
      ),
      fc.record({
        enum: fc.array(fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)), {
          minLength: 1,
          maxLength: 4,
        }),
      }),
      fc.record({ const: fc.oneof(fc.string(), fc.integer(), fc.constant(null)) }),
    );
    const schema = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        leaf,
        fc.record({ type: fc.constant('array'), items: tie('node') }),
        fc.record({ anyOf: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
        fc.record({ allOf: fc.array(tie('node'), { minLength: 1, maxLength: 2 }) }),
        fc.record({
          type: fc.constant('object'),
          properties: fc.dictionary(text, tie('node'), { maxKeys: 4 }),
          description: text,
          additionalProperties: fc.oneof(fc.boolean(), tie('node')),
        }),
      ),
    })).node;
    fc.assert(
      fc.property(
        fc.dictionary(text, schema, { maxKeys: 5 }),
        fc.string({ maxLength: 200 }),
        fc.stringMatching(/^[a-zA-Z0-9_-]{1,20}$/),
        (properties, description, name) => {
          const declaration = toolDeclarations([
            tool(name, { type: 'object', properties } as JsonSchemaObject, description),
          ]);
          expect(syntaxErrors(declaration)).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });
});
