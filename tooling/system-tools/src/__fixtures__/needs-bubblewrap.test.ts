// Run by system-tools.test.ts in a child vitest with a PATH that lacks bwrap: one test needs
// nothing, three need bubblewrap (two through a describe's hook, one from its first line).
import { beforeEach, describe, expect, it } from 'vitest';
import { skipWithout } from '../skip-without.js';

it('needs nothing', () => {
  expect(1 + 1).toBe(2);
});

describe('in the sandbox', () => {
  beforeEach(skipWithout('bwrap'));
  it('first', () => {
    expect.unreachable('ran without bubblewrap');
  });
  it('second', () => {
    expect.unreachable('ran without bubblewrap');
  });
});

it('one test of its own', (context) => {
  skipWithout('bwrap')(context);
  expect.unreachable('ran without bubblewrap');
});
