import { defineConfig } from 'tsup';

export default defineConfig({
  // The search worker is its own entry: the engine starts it from dist/search-worker.js.
  entry: { index: 'src/index.ts', 'search-worker': 'src/search-worker.ts' },
  format: ['esm'],
  dts: { entry: { index: 'src/index.ts' } },
  sourcemap: true,
  clean: true,
  target: 'es2023',
});
