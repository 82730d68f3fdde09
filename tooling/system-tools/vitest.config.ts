import { defineConfig } from 'vitest/config';
import { ciTestOptions } from './src/retry-once.mjs';

// 120 s: each test starts a child vitest over the fixture suite (tens of seconds on a loaded
// 2-core machine); the fixture suite runs only in such a child.
export default defineConfig({
  test: {
    // Under CI a failed test runs once more, and a pass on that retry is named (retry-once.mjs).
    ...ciTestOptions(),
    include: ['src/**/*.test.ts'],
    exclude: ['src/__fixtures__/**', '**/node_modules/**'],
    testTimeout: 120_000,
  },
});
