// Preloaded into the CLI by tests (`node --import <this> dist/main.js …`): the rename that ends a
// session file's save (`<file>.<pid>-<hex>.tmp` → `<file>`) never happens. The temporary's path is
// printed on stderr (`held-rename <path>`) and the process waits, so a test can kill it between
// the write and the rename, as a crash would, or keep it alive as a writer in the middle of a save.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const rename = fs.promises.rename;
fs.promises.rename = (from, to) => {
  if (!/\.\d+-[0-9a-f]{8}\.tmp$/.test(String(from))) return rename(from, to);
  process.stderr.write(`held-rename ${from}\n`);
  // Keeps the process alive: a pending promise alone would let it exit.
  setInterval(() => {}, 1 << 30);
  return new Promise(() => {});
};
syncBuiltinESMExports();
