import { configDefaults, defineConfig } from 'vitest/config';
import { ciTestOptions } from '../../tooling/system-tools/src/retry-once.mjs';

// The live tests (`*.live.test.ts`) talk to the vendor's real API: only with AGENT_LIVE_TESTS=1
// (`pnpm test:live`, and the API key in the environment); never part of `pnpm test`.
const live = process.env.AGENT_LIVE_TESTS === '1';

export default defineConfig({
  test: {
    // Under CI a failed test runs once more, and a pass on that retry is named (retry-once.mjs).
    ...ciTestOptions(),
    include: live ? ['src/**/*.live.test.ts'] : ['src/**/*.test.ts'],
    exclude: live ? configDefaults.exclude : [...configDefaults.exclude, 'src/**/*.live.test.ts'],
    // Under a loaded machine a retry test's real wait (retry-after: 1) plus start-up can pass 5 s.
    testTimeout: 120_000,
  },
});
