import { expect, it } from 'vitest';

// Fixture: run only by retry-once.test.ts, in a child vitest.
let attempts = 0;

it('fails the first time only', () => {
  attempts += 1;
  expect(attempts).toBeGreaterThan(1);
});

it('always fails', () => {
  expect(1).toBe(2);
});

it('always passes', () => {
  expect(1).toBe(1);
});
