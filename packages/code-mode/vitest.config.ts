import { defineConfig } from 'vitest/config';
import { ciTestOptions } from '../../tooling/system-tools/src/retry-once.mjs';

export default defineConfig({
  test: {
    // Under CI a failed test runs once more, and a pass on that retry is named (retry-once.mjs).
    ...ciTestOptions(),
    include: ['src/**/*.test.ts'],
    // A cold WebAssembly compile and the MCP reference server start are slow on a busy machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
