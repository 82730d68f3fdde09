import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Generous: the suite runs beside other workspaces' tests on 2 cores; a starved 200 ms test
    // must not fail on vitest's 5 s default. A hang still fails.
    testTimeout: 120_000,
  },
});
