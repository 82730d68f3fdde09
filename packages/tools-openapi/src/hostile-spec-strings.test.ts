/**
 * Strings of an API document (operation ids, path templates) that made JavaScript's engine
 * backtrack in quadratic time: a document of a few hundred kB held the loading process for
 * minutes. A test here that hangs is the failure.
 */
import { describe, expect, it } from 'vitest';
import { normalizeDocument } from './normalize.js';
import { sanitizePropertyName, sanitizeToolName } from './tool-name.js';

describe('names from a hostile document', () => {
  it('an operation id with a run of 200,000 dashes inside', () => {
    const name = sanitizeToolName(`a${'-'.repeat(200_000)}b`);
    expect(name).toMatch(/^a_[0-9a-z]+$/);
    expect(name?.length).toBeLessThanOrEqual(64);
    expect(sanitizeToolName(`\u0000${'-'.repeat(200_000)}-\u0000`)).toBeUndefined();
    expect(sanitizeToolName('__get-users--')).toBe('get-users');
  });

  it('a property name keeps its meaning', () => {
    expect(sanitizePropertyName(`\u0000${'_'.repeat(200_000)}_\u0000`)).toBeUndefined();
    expect(sanitizePropertyName('__page.size__')).toBe('page.size');
  });

  it('a path of 100,000 unclosed `{` is read', () => {
    const warnings: string[] = [];
    const document = normalizeDocument(
      {
        openapi: '3.0.0',
        info: { title: 't', version: '1' },
        paths: {
          [`/a/${'{x'.repeat(100_000)}`]: { get: { operationId: 'x', responses: {} } },
          '/b/{id}': { get: { operationId: 'y', responses: {} } },
        },
      },
      { warn: (message) => warnings.push(message) },
    );
    expect(document.operations).toHaveLength(2);
    expect(warnings.filter((warning) => warning.includes('path parameter'))).toEqual([
      expect.stringContaining('path parameter "id" is not declared'),
    ]);
  });
});
