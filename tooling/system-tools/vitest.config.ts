import { defineConfig } from 'vitest/config';

// 30 s like the packages; the fixture suite runs only in a child vitest of system-tools.test.ts.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    exclude: ['src/__fixtures__/**', '**/node_modules/**'],
    testTimeout: 30_000,
  },
});
