import { defineConfig } from 'vitest/config';

// 30 s like the packages: the default 5 s is not enough on a starved 2-core machine.
export default defineConfig({ test: { include: ['src/**/*.test.ts'], testTimeout: 30_000 } });
