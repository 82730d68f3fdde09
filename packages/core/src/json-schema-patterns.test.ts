import { format } from '@cfworker/json-schema';
import { describe, expect, it } from 'vitest';
import type { JsonSchema } from './json-schema.js';
import {
  backtrackingRisk,
  linearPatternCacheCount,
  linearPatternCacheSize,
  maxPatternPropertyNameLength,
} from './json-schema-patterns.js';
import { jsonSchemaValidationProblem, validateWithJsonSchema } from './json-schema-validation.js';
import { formatValidationIssues } from './validation.js';

// A tool's schema is someone else's (an MCP server, an API document), its arguments the model's.
// On JavaScript's backtracking engine each slow case here runs for minutes to hours on the loop's
// own thread: a test that hangs is the bug back.

const field = (schema: Record<string, unknown>): JsonSchema =>
  ({ type: 'object', properties: { v: schema } }) as JsonSchema;

const check = (schema: JsonSchema, value: unknown) => {
  const result = validateWithJsonSchema(schema, value);
  return result.ok ? 'ok' : formatValidationIssues(result.issues);
};

describe('patterns run in linear time', () => {
  it.each([
    ['\\d+\\.?\\d+x', `${'1'.repeat(30_000)}!`],
    ['[a-z]+$', `${'a'.repeat(200_000)}!`],
    ['^(a+)+$', `${'a'.repeat(5_000)}!`],
    ['(.*a){12}z', 'a'.repeat(3_000)],
    ['^(\\w+\\s?)*$', `${'word '.repeat(4_000)}!`],
  ])('pattern %s against a long string ends, and says which pattern', (pattern, value) => {
    expect(check(field({ type: 'string', pattern }), { v: value })).toContain(
      `expected a string matching /${pattern}/`,
    );
  });

  it('still enforces the patterns: matches, anchors, Unicode classes, propertyNames', () => {
    const schema = field({ type: 'string', pattern: '^[A-Z]{2}-\\d{3}$' });
    expect(check(schema, { v: 'AB-123' })).toBe('ok');
    expect(check(schema, { v: 'AB-1234' })).toContain('expected a string matching');
    const letters = field({ type: 'string', pattern: '^\\p{L}+$' });
    expect(check(letters, { v: 'Ünïcödé' })).toBe('ok');
    expect(check(letters, { v: 'abc1' })).toContain('expected a string matching');
    const names = {
      type: 'object',
      propertyNames: { pattern: '^[a-z_]+$' },
    } as JsonSchema;
    expect(check(names, { good_name: 1 })).toBe('ok');
    expect(check(names, { 'Bad-Name': 1 })).not.toBe('ok');
  });

  it('a pattern beside a format: both are enforced', () => {
    const schema = field({ type: 'string', format: 'email', pattern: '^a' });
    expect(check(schema, { v: 'a@example.com' })).toBe('ok');
    expect(check(schema, { v: 'b@example.com' })).toContain('expected a string matching /^a/');
    expect(check(schema, { v: 'a-not-an-address' })).toContain('expected a email string');
  });

  it('the url format: no exponential regular expression, same answers', () => {
    const schema = field({ type: 'string', format: 'url' });
    // The validator's own regular expression takes hours on this one (a URL with an empty port).
    expect(check(schema, { v: `http://${'a'.repeat(60)}:` })).toBe('ok');
    expect(check(schema, { v: `http://${'a'.repeat(60)}:x` })).toContain('expected a url string');
    expect(check(schema, { v: 'https://example.com/path?q=1' })).toBe('ok');
    expect(check(schema, { v: 'ftp://files.example.org' })).toBe('ok');
    for (const bad of ['example.com', 'mailto:a@b.c', 'http://', 'http://exa mple.com'])
      expect(check(schema, { v: bad })).toContain('expected a url string');
  });

  it('a pattern RE2 cannot run (lookaround, back-references) is reported and not checked', () => {
    const schema = field({ type: 'string', pattern: '^(?=.*\\d)(\\w)\\1' });
    expect(jsonSchemaValidationProblem(schema)).toContain(
      'needs lookaround or back-references, which only a backtracking engine runs; not checked',
    );
    expect(check(schema, { v: `${'a'.repeat(50_000)}!` })).toBe('ok');
  });
});

describe('a server that lists ever new patterns', () => {
  // Ten times the cache's size: as bounded as 100,000 (the cache cannot tell), at a tenth of the
  // time (100,000 took over 60 s on a loaded CI machine).
  const listed = linearPatternCacheSize * 10;
  it('ten thousand distinct patterns: the format table and the cache stay bounded, old schemas still enforced', () => {
    const tableSize = Reflect.ownKeys(format).length;
    const schemaOf = (index: number) => field({ type: 'string', pattern: `^id-${index}-[a-z]+$` });
    const first = schemaOf(0);
    expect(check(first, { v: 'id-0-abc' })).toBe('ok');
    for (let index = 1; index <= listed; index++) {
      // Each listing brings new schema objects: compiled (and their pattern with them) on first use.
      expect(jsonSchemaValidationProblem(schemaOf(index))).toBeUndefined();
    }
    expect(Reflect.ownKeys(format).length).toBe(tableSize);
    expect(linearPatternCacheCount()).toBe(linearPatternCacheSize);
    // The first schema's pattern was evicted long ago: it is compiled again, not skipped.
    expect(check(first, { v: 'id-0-abc' })).toBe('ok');
    expect(check(first, { v: 'id-1-abc' })).toContain('expected a string matching /^id-0-[a-z]+$/');
    expect(check(first, { v: 'id-0-ABC' })).toContain('expected a string matching');
    const recent = schemaOf(listed - 1);
    expect(check(recent, { v: `id-${listed - 1}-x` })).toBe('ok');
    expect(check(recent, { v: `id-${listed - 2}-x` })).toContain('expected a string matching');
    expect(linearPatternCacheCount()).toBeLessThanOrEqual(linearPatternCacheSize);
  }, 120_000);

  it('patterns inside anyOf and propertyNames are enforced after eviction too', () => {
    const schema = {
      type: 'object',
      properties: {
        v: {
          anyOf: [
            { type: 'string', pattern: '^a+$' },
            { type: 'string', pattern: '^b+$' },
          ],
        },
      },
      propertyNames: { pattern: '^[a-z]$' },
    } as JsonSchema;
    expect(check(schema, { v: 'aaa' })).toBe('ok');
    for (let index = 0; index < linearPatternCacheSize * 2; index++)
      jsonSchemaValidationProblem(field({ type: 'string', pattern: `^evict-${index}$` }));
    expect(check(schema, { v: 'bbb' })).toBe('ok');
    expect(check(schema, { v: 'ab' })).not.toBe('ok');
    expect(check(schema, { Vv: 'aaa' })).not.toBe('ok');
  });

  it('names outside ours still resolve through the table as before', () => {
    const table = format as Record<string, unknown>;
    expect(typeof table.email).toBe('function');
    expect(table['no-such-format']).toBeUndefined();
    expect(typeof table.hasOwnProperty).toBe('function');
  });
});

describe('patternProperties', () => {
  const schema = (pattern: string): JsonSchema =>
    ({
      type: 'object',
      patternProperties: { [pattern]: { type: 'number' } },
    }) as JsonSchema;

  it('keeps a pattern of a safe shape and enforces it', () => {
    expect(jsonSchemaValidationProblem(schema('^x-[a-z]+$'))).toBeUndefined();
    expect(check(schema('^x-[a-z]+$'), { 'x-rate': 1 })).toBe('ok');
    expect(check(schema('^x-[a-z]+$'), { 'x-rate': 'fast' })).not.toBe('ok');
  });

  it.each(['^(a+)+$', '(a|aa)*b', '.*a.*b.*c.*d'])('drops %s, saying why', (pattern) => {
    expect(jsonSchemaValidationProblem(schema(pattern))).toMatch(/could take too long to match/);
    expect(check(schema(pattern), { [`${'a'.repeat(200)}!`]: 'x' })).toBe('ok');
  });

  it('refuses a property name longer than the bound, anywhere in the value', () => {
    const long = 'x'.repeat(maxPatternPropertyNameLength + 1);
    expect(check(schema('^x-'), { [long]: 1 })).toContain(
      `field name of ${long.length} characters (at most ${maxPatternPropertyNameLength})`,
    );
    expect(check(schema('^x-'), { 'x-a': 1, nested: [{ [long]: 1 }] })).toContain('field name');
    // Without patternProperties names are not bounded.
    expect(check({ type: 'object' } as JsonSchema, { [long]: 1 })).toBe('ok');
  });
});

describe('backtrackingRisk', () => {
  it.each([
    '(a+)+',
    '(a|b)*',
    '((ab)*c)+',
    '(a+){2,}',
    '(?:x|y)+z',
    '(?:a+)+',
    '(?<n>a*)*',
    '.*a.*b.*c.*d',
    '(\\d+\\s?){1,40}',
  ])('%s is risky', (pattern) => {
    expect(backtrackingRisk(pattern)).toBeDefined();
  });

  it.each([
    '^x-[a-z]+$',
    '(ab)+',
    '(?:ab)+',
    '(?<word>ab)+c',
    '(?=a)b+',
    '[(+|]*x',
    '\\(a+\\)+',
    'a{2,5}b+',
    '(a+)?',
    '^[a-z]+(-[0-9])?$',
  ])('%s is not', (pattern) => {
    expect(backtrackingRisk(pattern)).toBeUndefined();
  });
});
