import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm'],
  dts: true,
  // No source map: it would repeat the ~5 MB of data for no debugging value.
  sourcemap: false,
  clean: true,
  target: 'es2023',
});
