import { toolNamePattern } from '@agent/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hash, sanitizePropertyName, sanitizeToolName, uniqueToolNames } from './tool-name.js';

describe('sanitizeToolName', () => {
  it('keeps valid names, replaces the rest, and shortens deterministically with a hash', () => {
    expect(sanitizeToolName('listPets')).toBe('listPets');
    expect(sanitizeToolName('repos/get-content')).toBe('repos_get-content');
    expect(sanitizeToolName('get /pets/{petId}')).toBe('get_pets_petId');
    expect(sanitizeToolName('...')).toBeUndefined();
    const long = `x${'y'.repeat(100)}`;
    expect(sanitizeToolName(long)).toBe(`x${'y'.repeat(54)}_${hash(long)}`);
    expect(sanitizeToolName(long)).toHaveLength(64);
  });

  it('never starts a name with a digit (Gemini refuses such names)', () => {
    expect(sanitizeToolName('2fa/enable')).toBe('op_2fa_enable');
    expect(sanitizeToolName('_9lives')).toBe('op_9lives');
    expect(sanitizeToolName('v2/list')).toBe('v2_list');
  });

  it('property: always valid or undefined, and deterministic', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), (text) => {
        const name = sanitizeToolName(text);
        if (name !== undefined) expect(name).toMatch(toolNamePattern);
        expect(sanitizeToolName(text)).toBe(name);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('uniqueToolNames', () => {
  it('property: every name valid, all distinct, same input gives same output', () => {
    const candidate = fc.oneof(
      fc.string({ maxLength: 90 }),
      fc.constantFrom('a', 'a_2', 'a/2', 'A', '', '---', 'x'.repeat(70), `${'x'.repeat(70)}!`),
    );
    fc.assert(
      fc.property(fc.array(candidate, { maxLength: 40 }), (candidates) => {
        const names = uniqueToolNames(candidates);
        expect(names).toHaveLength(candidates.length);
        for (const name of names) expect(name).toMatch(toolNamePattern);
        expect(new Set(names).size).toBe(names.length);
        expect(uniqueToolNames(candidates)).toEqual(names);
      }),
      { numRuns: 1000 },
    );
  });

  it('suffixes collisions and uses the fallback when nothing usable is left', () => {
    expect(
      uniqueToolNames(['a', 'a', 'a_2', '日本'], [undefined, undefined, undefined, 'get_/b']),
    ).toEqual(['a', 'a_2', 'a_2_2', 'get_b']);
    expect(uniqueToolNames(['!!!'])[0]).toMatch(/^tool_[0-9a-f]{8}$/);
  });
});

describe('sanitizePropertyName', () => {
  it('keeps dots and dashes, replaces brackets, and stays within 64 characters', () => {
    expect(sanitizePropertyName('X-Request-Id')).toBe('X-Request-Id');
    expect(sanitizePropertyName('page[size]')).toBe('page_size');
    expect(sanitizePropertyName('a.b')).toBe('a.b');
    expect(sanitizePropertyName('[]')).toBeUndefined();
    fc.assert(
      fc.property(fc.string({ maxLength: 120 }), (text) => {
        const name = sanitizePropertyName(text);
        if (name !== undefined) expect(name).toMatch(/^[a-zA-Z0-9_.-]{1,64}$/);
      }),
    );
  });
});
