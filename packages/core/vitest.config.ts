import { defineConfig } from 'vitest/config';
import { ciTestOptions } from '../../tooling/system-tools/src/retry-once.mjs';

export default defineConfig({
  test: {
    // Under CI a failed test runs once more, and a pass on that retry is named (retry-once.mjs).
    ...ciTestOptions(),
    include: ['src/**/*.test.ts'],
    // Generous: the suite runs beside other workspaces' tests on 2 cores; a starved 200 ms test
    // must not fail on vitest's 5 s default. A hang still fails.
    testTimeout: 120_000,
  },
});
