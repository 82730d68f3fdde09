import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Real processes (bash in its sandbox) and real HTTP servers on a busy shared machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
