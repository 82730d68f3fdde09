import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // A real restate-server and worker processes: start-up takes seconds on a busy machine.
    testTimeout: 300_000,
    hookTimeout: 120_000,
  },
});
