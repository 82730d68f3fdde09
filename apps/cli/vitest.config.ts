import { defineConfig } from 'vitest/config';
import { ciTestOptions } from '../../tooling/system-tools/src/retry-once.mjs';

export default defineConfig({
  test: {
    // Under CI a failed test runs once more, and a pass on that retry is named (retry-once.mjs).
    ...ciTestOptions(),
    include: ['src/**/*.test.ts'],
    // Many tests run the built CLI several times, each starting MCP servers or a sandbox: alone
    // one takes a few seconds, but in CI every package's suite runs at once on 2 cores and a test
    // of three CLI runs once took past 60 s (a hang still ends the test, two minutes in).
    testTimeout: 120_000,
    // Two files at a time even on 2 cores (vitest's default there is one): most of a CLI test is
    // waiting on child processes (the CLI, servers, bwrap, tmux), and alone at the end of CI the
    // suite kept one core idle for ~25 minutes.
    maxWorkers: 2,
    hookTimeout: 30_000,
  },
});
