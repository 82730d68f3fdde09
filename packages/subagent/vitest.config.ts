import { defineConfig } from 'vitest/config';
import { ciTestOptions } from '../../tooling/system-tools/src/retry-once.mjs';

export default defineConfig({
  test: {
    // Under CI a failed test runs once more, and a pass on that retry is named (retry-once.mjs).
    ...ciTestOptions(),
    include: ['src/**/*.test.ts'],
    testTimeout: 120_000,
    // Hooks start and stop real processes and servers: past the 10 s default under a CI's load.
    hookTimeout: 60_000,
  },
});
