import { defineConfig } from 'vitest/config';
import { ciTestOptions } from '../../tooling/system-tools/src/retry-once.mjs';

export default defineConfig({
  test: {
    // Under CI a failed test runs once more, and a pass on that retry is named (retry-once.mjs).
    ...ciTestOptions(),
    include: ['src/**/*.test.ts'],
    testTimeout: 120_000,
    // Fixture set-up (building a tree of files, starting worker threads) slows down on a loaded machine.
    hookTimeout: 60_000,
  },
});
