import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 120_000,
    // Hooks start and stop real processes and servers: past the 10 s default under a CI's load.
    hookTimeout: 60_000,
  },
});
