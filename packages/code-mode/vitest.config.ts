import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // A cold WebAssembly compile and the MCP reference server start are slow on a busy machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
