// insideAny is the fast form of "inside any of these roots" a walk asks of every entry (the CLI
// hides ~60 roots: glob over 100,000 files spent a minute in path.relative). It must answer exactly
// as isPathInside does, for normalised children and for any other string given to it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { insideAny, isPathInside } from './path-inside.js';

const segment = fc.constantFrom('a', 'ab', 'b', '..x', '.x', 'x..', '..', '.', '', 'a b', 'é');
const absolute = fc
  .array(segment, { minLength: 0, maxLength: 5 })
  .map((parts) => `/${parts.join('/')}`);
const withTrailing = fc.tuple(absolute, fc.boolean()).map(([p, slash]) => (slash ? `${p}/` : p));

describe('insideAny', () => {
  it('agrees with isPathInside for every root list and child (normalised or not)', () => {
    fc.assert(
      fc.property(fc.array(withTrailing, { maxLength: 4 }), withTrailing, (parents, child) => {
        const expected = parents.some((parent) => isPathInside(parent, child));
        expect(insideAny(parents)(child)).toBe(expected);
      }),
      { numRuns: 5_000 },
    );
  });

  it.each([
    [['/home/me/.ssh'], '/home/me/.ssh', true],
    [['/home/me/.ssh'], '/home/me/.ssh/id_ed25519', true],
    [['/home/me/.ssh'], '/home/me/.sshx/key', false],
    [['/home/me/.ssh'], '/home/me', false],
    [['/a'], '/a/..x/file', true],
    [['/a'], '/a/../b', false],
    [['/'], '/anything/at/all', true],
    [[], '/a', false],
  ])('%j contains %s: %s', (parents, child, expected) => {
    expect(insideAny(parents)(child)).toBe(expected);
  });
});
