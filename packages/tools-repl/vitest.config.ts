import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Real interpreters under a shared, loaded machine.
    testTimeout: 60_000,
    // Hooks start and stop real processes and servers: past the 10 s default under a CI's load.
    hookTimeout: 60_000,
  },
});
