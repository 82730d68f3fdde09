import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineTool, validateWithZod } from './define-tool.js';
import { executeTool } from './execute-tool.js';
import { toolResultText } from './messages.js';
import { unknownKeyIssues } from './unknown-keys.js';
import { formatValidationIssues } from './validation.js';

const search = z.object({
  pattern: z.string(),
  path: z.string().optional(),
  include: z.string().optional(),
});

function failure(schema: z.ZodType, value: unknown): string {
  const result = validateWithZod(schema, value);
  if (result.ok) throw new Error(`expected ${JSON.stringify(value)} to be refused`);
  return formatValidationIssues(result.issues);
}

describe('unknown keys are invalid arguments, never dropped', () => {
  it('names the key and lists the known ones', () => {
    expect(failure(search, { pattern: 'x', glob: '*.ts' })).toBe(
      'at "(root)": unknown field "glob" (known fields: pattern, path, include)',
    );
  });

  it('reports every unknown key, beside the other issues', () => {
    const text = failure(search, { glob: '*.ts', type: 'ts' });
    expect(text).toContain('at "pattern": required string is missing');
    expect(text).toContain('unknown field "glob"');
    expect(text).toContain('unknown field "type"');
  });

  it.each([
    ['nested object', z.object({ a: z.object({ b: z.string() }) }), { a: { b: 'x', c: 1 } }, 'a'],
    [
      'optional nested object',
      z.object({ a: z.object({ b: z.string() }).optional() }),
      { a: { b: 'x', c: 1 } },
      'a',
    ],
    [
      'nullable, defaulted object',
      z.object({ a: z.object({ b: z.string() }).nullable().default(null) }),
      { a: { b: 'x', c: 1 } },
      'a',
    ],
    [
      'array items',
      z.object({ edits: z.array(z.object({ old: z.string() })) }),
      { edits: [{ old: 'x' }, { old: 'y', c: 1 }] },
      'edits[1]',
    ],
    [
      'record values',
      z.object({ env: z.record(z.string(), z.object({ v: z.string() })) }),
      { env: { HOME: { v: 'x', c: 1 } } },
      'env.HOME',
    ],
    [
      'tuple items',
      z.object({ t: z.tuple([z.object({ a: z.string() })]) }),
      { t: [{ a: 'x', c: 1 }] },
      't[0]',
    ],
    [
      'a pipe (transform) by its input',
      z.object({ a: z.object({ b: z.string() }).transform((value) => value.b) }),
      { a: { b: 'x', c: 1 } },
      'a',
    ],
    [
      'a lazy schema',
      z.object({ a: z.lazy(() => z.object({ b: z.string() })) }),
      { a: { b: 'x', c: 1 } },
      'a',
    ],
    [
      'the union option zod picks',
      z.object({
        a: z.union([z.object({ kind: z.literal('x') }), z.object({ kind: z.literal('y') })]),
      }),
      { a: { kind: 'y', c: 1 } },
      'a',
    ],
    [
      'a discriminated union',
      z.object({
        a: z.discriminatedUnion('kind', [
          z.object({ kind: z.literal('x'), x: z.string() }),
          z.object({ kind: z.literal('y'), y: z.string() }),
        ]),
      }),
      { a: { kind: 'y', y: 'v', x: 'stray' } },
      'a',
    ],
  ])('inside a %s', (_name, schema, value, where) => {
    expect(failure(schema, value)).toMatch(
      new RegExp(`^at "${where.replace(/[[\]]/g, '\\$&')}": unknown field "(c|x)"`),
    );
  });

  it('keys an intersection knows on either side are fine; one neither knows is reported', () => {
    const both = z.intersection(z.object({ a: z.string() }), z.object({ b: z.string() }));
    expect(validateWithZod(both, { a: 'x', b: 'y' }).ok).toBe(true);
    expect(failure(both, { a: 'x', b: 'y', c: 1 })).toContain(
      'unknown field "c" (known fields: a, b)',
    );
  });

  it('loose objects and catch-alls keep extra keys; strict objects keep their own message', () => {
    expect(validateWithZod(z.looseObject({ a: z.string() }), { a: 'x', extra: 1 }).ok).toBe(true);
    expect(
      validateWithZod(z.object({ a: z.string() }).catchall(z.number()), { a: 'x', extra: 1 }).ok,
    ).toBe(true);
    expect(failure(z.strictObject({ a: z.string() }), { a: 'x', extra: 1 })).toBe(
      'at "(root)": unknown field "extra"',
    );
  });

  it('an object with no fields says so', () => {
    expect(failure(z.object({}), { a: 1 })).toBe(
      'at "(root)": unknown field "a" (this object takes no fields)',
    );
  });

  it('keys named like Object.prototype members are unknown too', () => {
    for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const value = JSON.parse(`{"pattern":"x",${JSON.stringify(key)}:1}`);
      expect(failure(search, value)).toContain(`unknown field "${key}"`);
    }
  });

  it('any set of extra keys on any nested level is reported, and known keys never are', () => {
    const schema = z.object({
      name: z.string(),
      options: z.object({ depth: z.number().optional(), tags: z.array(z.string()).optional() }),
    });
    const known = new Set(['name', 'options', 'depth', 'tags']);
    const extraKey = fc.string({ minLength: 1, maxLength: 8 }).filter((key) => !known.has(key));
    fc.assert(
      fc.property(
        fc.uniqueArray(extraKey, { maxLength: 3 }),
        fc.uniqueArray(extraKey, { maxLength: 3 }),
        (top, nested) => {
          const value: Record<string, unknown> = { name: 'n', options: { depth: 1 } };
          for (const key of top) value[key] = 1;
          for (const key of nested) (value.options as Record<string, unknown>)[key] = 1;
          const issues = unknownKeyIssues(schema, value);
          expect(issues).toHaveLength(top.length + nested.length);
          expect(validateWithZod(schema, value).ok).toBe(issues.length === 0);
        },
      ),
    );
  });
});

describe('through a tool call', () => {
  it('the model reads an invalid-args result that names the known fields; the tool never runs', async () => {
    let ran = false;
    const tool = defineTool({
      name: 'search',
      description: 'searches',
      input: search,
      execute: async () => {
        ran = true;
        return 'searched everything';
      },
    });
    const result = await executeTool(tool, { pattern: 'x', glob: '*.ts' });
    expect(ran).toBe(false);
    expect(result.isError).toBe(true);
    expect(result.errorKind).toBe('invalid-args');
    expect(toolResultText(result.content)).toContain(
      'unknown field "glob" (known fields: pattern, path, include)',
    );
  });

  it('an alias renamed by prepareArguments is not unknown', async () => {
    const tool = defineTool({
      name: 'search',
      description: 'searches',
      input: search,
      prepareArguments: (raw) => {
        const { query, ...rest } = raw as Record<string, unknown>;
        return query === undefined ? raw : { pattern: query, ...rest };
      },
      execute: async ({ pattern }) => `searched ${pattern}`,
    });
    const result = await executeTool(tool, { query: 'x' });
    expect(toolResultText(result.content)).toBe('searched x');
  });
});
