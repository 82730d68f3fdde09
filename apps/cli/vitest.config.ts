import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Many tests run the built CLI several times, each starting MCP servers or a sandbox: alone
    // one takes a few seconds, but in CI every package's suite runs at once on 2 cores and a test
    // of three CLI runs once took past 60 s (a hang still ends the test, two minutes in).
    testTimeout: 120_000,
    hookTimeout: 30_000,
  },
});
