import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 120_000,
    // Fixture set-up (building a tree of files, starting worker threads) slows down on a loaded machine.
    hookTimeout: 60_000,
  },
});
