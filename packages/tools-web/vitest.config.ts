import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Real language servers: a cold pyright or tsserver start takes seconds on a busy machine.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
