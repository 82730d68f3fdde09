import { defineConfig } from 'tsup';

export default defineConfig({
  // The script worker is its own entry: scripts run in it (script-thread.ts starts
  // dist/script-worker.js, or the copy a bundle ships next to its chunks).
  entry: { index: 'src/index.ts', 'script-worker': 'src/script-worker.ts' },
  format: ['esm'],
  dts: { entry: { index: 'src/index.ts' } },
  sourcemap: true,
  clean: true,
  target: 'es2023',
  // sucrase is a devDependency, so it is bundled (with the few modules its `transform` uses) into
  // a chunk of its own, loaded by the first script or the warm-up: one file reads in ~15 ms where
  // its ~100 modules took ~45, and an install does not fetch its CLI's dependencies. Its licence
  // is in THIRD-PARTY-NOTICES.md.
  splitting: true,
});
