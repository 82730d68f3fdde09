// Settings' tool globs (`--tools`, codeMode.tools) against tool names: eight `*`s made the regular
// expression this replaced take minutes on one 60-character name. A hang here is the failure.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { wildcardMatch } from './wildcard.js';

describe('wildcardMatch', () => {
  it('a glob of many * against a long name', () => {
    expect(wildcardMatch('*a*a*a*a*a*a*a*a*b', 'a'.repeat(64))).toBe(false);
    expect(wildcardMatch('*a*a*a*a*a*a*a*a*b', `${'a'.repeat(63)}b`)).toBe(true);
  });

  it('answers as ^…$ with .* for * does', () => {
    const regExpOf = (glob: string) =>
      new RegExp(
        `^${glob
          .split('*')
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
      );
    const text = fc.stringMatching(/^[ab_*.]{0,8}$/);
    fc.assert(
      fc.property(text, fc.stringMatching(/^[ab_.]{0,10}$/), (glob, name) => {
        expect(wildcardMatch(glob, name)).toBe(regExpOf(glob).test(name));
      }),
      { numRuns: 3000 },
    );
    expect(wildcardMatch('mcp__github__*', 'mcp__github__create_issue')).toBe(true);
    expect(wildcardMatch('*_file', 'read_file')).toBe(true);
    expect(wildcardMatch('*_file', 'read_files')).toBe(false);
  });
});
