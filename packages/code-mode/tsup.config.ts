import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'es2023',
  // sucrase is a devDependency, so it is bundled (with the few modules its `transform` uses) into
  // a chunk of its own, loaded by the first script or the warm-up: one file reads in ~15 ms where
  // its ~100 modules took ~45, and an install does not fetch its CLI's dependencies. Its licence
  // is in THIRD-PARTY-NOTICES.md.
  splitting: true,
});
