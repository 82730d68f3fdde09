import { defineConfig } from 'vitest/config';

// The fixture suite alone, as its own project (system-tools.test.ts runs it in a child vitest).
export default defineConfig({ test: { include: ['*.test.ts'], testTimeout: 30_000 } });
