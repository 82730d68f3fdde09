import { defineConfig } from 'vitest/config';
import { ciTestOptions } from '../system-tools/src/retry-once.mjs';

// 30 s like the packages: the default 5 s is not enough on a starved 2-core machine.
export default defineConfig({
  test: {
    // Under CI a failed test runs once more, and a pass on that retry is named (retry-once.mjs).
    ...ciTestOptions(),
    include: ['src/**/*.test.ts'],
    testTimeout: 30_000,
  },
});
