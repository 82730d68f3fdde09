import { defineConfig } from 'tsup';

export default defineConfig({
  // The HTML worker is its own entry: convertHtml starts it from dist/html-worker.js.
  entry: { index: 'src/index.ts', 'html-worker': 'src/html-worker.ts' },
  format: ['esm'],
  dts: { entry: { index: 'src/index.ts' } },
  sourcemap: true,
  clean: true,
  target: 'es2023',
});
