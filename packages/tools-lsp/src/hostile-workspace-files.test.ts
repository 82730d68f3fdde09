/**
 * Which language server a workspace gets is decided when a session starts, before anything is
 * asked: this process reads the workspace's `node_modules/.bin/tsc` head and the `package.json`
 * of its TypeScript to tell version 7 from 5. The workspace is the repository's: a FIFO there
 * blocked the start for ever (deaf to Ctrl-C), a link to `/dev/zero` read 700 MB. Each is now
 * passed over at once; a test here that hangs is the failure.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { typescriptMajorVersion } from './language-servers.js';
import { readRegularFile } from './paths.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A workspace whose node_modules/.bin/tsc is an executable script beside node_modules/typescript. */
function workspace(): { bin: string; manifest: string; tsc: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lsp-hostile-files-'));
  made.push(dir);
  const bin = path.join(dir, 'node_modules', '.bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.mkdirSync(path.join(dir, 'node_modules', 'typescript'));
  const tsc = path.join(bin, 'tsc');
  fs.writeFileSync(tsc, '#!/bin/sh\necho tsc\n', { mode: 0o755 });
  return { bin, manifest: path.join(dir, 'node_modules', 'typescript', 'package.json'), tsc };
}

const plants: [string, (file: string) => void][] = [
  ['a FIFO', (file) => execFileSync('mkfifo', [file])],
  ['a link to /dev/zero', (file) => fs.symlinkSync('/dev/zero', file)],
  [
    'a sparse file of 2 GB',
    (file) => {
      fs.writeFileSync(file, '');
      fs.truncateSync(file, 2 * 1024 ** 3);
    },
  ],
];

describe("a workspace's TypeScript files that are not small regular files", () => {
  it.each(plants)('typescript/package.json as %s: no version, at once', async (_label, plant) => {
    const { manifest, tsc } = workspace();
    plant(manifest);
    expect(await typescriptMajorVersion(tsc)).toBeUndefined();
  });

  it.each(plants)('.bin/tsc as %s: no version, at once', async (_label, plant) => {
    const { manifest, tsc } = workspace();
    fs.writeFileSync(manifest, JSON.stringify({ name: 'typescript', version: '7.0.0' }));
    fs.rmSync(tsc);
    plant(tsc);
    // The manifest beside .bin still tells the version; the head of tsc is not waited on.
    expect(await typescriptMajorVersion(tsc)).toBe(7);
  });

  it('an ordinary manifest still gives the version', async () => {
    const { manifest, tsc } = workspace();
    fs.writeFileSync(manifest, JSON.stringify({ name: 'typescript', version: '5.9.3' }));
    expect(await typescriptMajorVersion(tsc)).toBe(5);
  });

  it('readRegularFile reads at most what it is told, and nothing of a FIFO or device', async () => {
    const { manifest } = workspace();
    fs.writeFileSync(manifest, 'abcdef');
    expect(await readRegularFile(manifest, 3)).toBe('abc');
    expect(await readRegularFile(manifest, 100)).toBe('abcdef');
    expect(await readRegularFile('/dev/zero', 100)).toBeUndefined();
    expect(await readRegularFile(path.join(path.dirname(manifest), 'none'), 100)).toBeUndefined();
  });
});
