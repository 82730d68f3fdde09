// The stdio launcher's perl runs outside any sandbox before every server: it is the system's,
// never a `perl` PATH finds first. PATH often names a folder of the workspace (an activated
// `.venv/bin`, the `node_modules/.bin` that `npx` puts first) where a sandboxed command can write.
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { groupLauncher } from './stdio-launcher.js';

const originalPath = process.env.PATH;
const made: string[] = [];
afterEach(() => {
  process.env.PATH = originalPath;
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe.runIf(process.platform === 'linux')("the launcher's perl", () => {
  it('is not the perl a workspace folder first on PATH holds', () => {
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'launcher-perl-')));
    made.push(workspace);
    const bin = join(workspace, '.venv', 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'perl'), '#!/bin/sh\nexit 0\n');
    chmodSync(join(bin, 'perl'), 0o755);
    process.env.PATH = [bin, originalPath].join(delimiter);
    const launcher = groupLauncher('sh', ['-c', 'true'], process.env, workspace, true);
    expect(launcher?.file.startsWith(workspace) ?? false).toBe(false);
  });
});
