import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'testing/index': 'src/testing/index.ts',
    'file-journal/index': 'src/file-journal/index.ts',
    'regular-file/index': 'src/regular-file/index.ts',
    'credentials/index': 'src/credentials/index.ts',
    'loopback/index': 'src/loopback/index.ts',
  },
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'es2023',
});
