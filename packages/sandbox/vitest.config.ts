import { defineConfig } from 'vitest/config';
import { ciTestOptions } from '../../tooling/system-tools/src/retry-once.mjs';

export default defineConfig({
  test: {
    // Under CI a failed test runs once more, and a pass on that retry is named (retry-once.mjs).
    ...ciTestOptions(),
    include: ['src/**/*.test.ts'],
    testTimeout: 120_000,
    // Hooks set up and remove real sandboxes and fixture trees (the flood attempts leave 10,000
    // directories): under a CI's load, removing them took past the 10 s default.
    hookTimeout: 120_000,
  },
});
