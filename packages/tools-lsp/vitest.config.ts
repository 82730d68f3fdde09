import { defineConfig } from 'vitest/config';
import { ciTestOptions } from '../../tooling/system-tools/src/retry-once.mjs';

export default defineConfig({
  test: {
    // Under CI a failed test runs once more, and a pass on that retry is named (retry-once.mjs).
    ...ciTestOptions(),
    include: ['src/**/*.test.ts'],
    // Real language servers: a cold pyright or tsserver start takes seconds on a busy machine.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
