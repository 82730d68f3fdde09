import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Real interpreters under a shared, loaded machine.
    testTimeout: 60_000,
  },
});
