import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 120_000,
    // `global.gc` for the memory check.
    pool: 'forks',
    execArgv: ['--expose-gc'],
  },
});
