import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { ciRetry, RetriedTestsReporter } from '../../retry-once.mjs';

// The flaky fixture suite alone (retry-once.test.ts runs it in a child vitest), configured as
// every package's suite is, its records' file names relative to the repository root.
const root = fileURLToPath(new URL('../../../../../', import.meta.url));
export default defineConfig({
  test: {
    include: ['*.test.ts'],
    retry: ciRetry,
    reporters: ['default', new RetriedTestsReporter({ root })],
  },
});
