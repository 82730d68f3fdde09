import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 120_000,
    // Hooks set up and remove real sandboxes and fixture trees (the flood attempts leave 10,000
    // directories): under a CI's load, removing them took past the 10 s default.
    hookTimeout: 120_000,
  },
});
