// Programs the tools start themselves, outside any sandbox — ripgrep for the search tool, mkfifo
// for bash's output pipes — are never files a command could have put in the workspace. PATH often
// names a folder of it (an activated `.venv/bin`, direnv's `PATH_add bin`, the `node_modules/.bin`
// that `npx`/`pnpm exec` put first); a sandboxed bash call wrote `.venv/bin/rg` there and the next
// search ran it unsandboxed. Each planted program here appends to a canary outside the workspace.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBashTool } from './bash.js';
import { createSearchTool } from './search.js';
import { findRipgrep } from './search-engines.js';
import { makeTempDir, resultText, testContext } from './test-helpers.js';

const originalPath = process.env.PATH;
let base: string;
let workspace: string;
let canary: string;

/** Writes an executable `name` in `folder` that notes its run in the canary, then runs the real one. */
function plant(folder: string, name: string): void {
  fs.mkdirSync(folder, { recursive: true });
  const real = ['/usr/bin', '/bin'].map((dir) => path.join(dir, name)).find(fs.existsSync);
  const file = path.join(folder, name);
  fs.writeFileSync(
    file,
    `#!/bin/sh\necho "${name} ran" >> '${canary}'\n${real === undefined ? 'exit 1' : `exec '${real}' "$@"`}\n`,
  );
  fs.chmodSync(file, 0o755);
}

function canaryText(): string {
  return fs.existsSync(canary) ? fs.readFileSync(canary, 'utf8') : '';
}

beforeEach(() => {
  base = makeTempDir('workspace-programs-');
  workspace = path.join(base, 'workspace');
  canary = path.join(base, 'CANARY');
  fs.mkdirSync(workspace);
  fs.writeFileSync(path.join(workspace, 'a.txt'), 'hello needle\n');
});

afterEach(() => {
  process.env.PATH = originalPath;
});

const folders: [string, () => string][] = [
  ["an activated virtualenv's bin inside the workspace", () => path.join(workspace, '.venv/bin')],
  [
    "the workspace's node_modules/.bin (npx, pnpm exec)",
    () => path.join(workspace, 'node_modules/.bin'),
  ],
  ['a node_modules/.bin outside the workspace', () => path.join(base, 'other/node_modules/.bin')],
];

describe('the search tool runs no ripgrep of the workspace', () => {
  it.each(folders)('%s, first on PATH', async (_label, folder) => {
    plant(folder(), 'rg');
    process.env.PATH = [folder(), originalPath].join(path.delimiter);
    expect(findRipgrep(process.env.PATH, [workspace])).not.toBe(path.join(folder(), 'rg'));
    const search = createSearchTool({ cwd: workspace });
    const result = await search.execute({ pattern: 'needle' }, testContext());
    expect(resultText(result)).toContain('a.txt');
    expect(canaryText()).toBe('');
  });
});

describe("bash's output pipes run no mkfifo of the workspace", () => {
  it.each(folders)('%s, first on PATH', async (_label, folder) => {
    plant(folder(), 'mkfifo');
    process.env.PATH = [folder(), originalPath].join(path.delimiter);
    const bash = createBashTool({ cwd: workspace });
    for (const word of ['one', 'two', 'three']) {
      const result = await bash.execute({ command: `echo ${word}` }, testContext());
      expect(resultText(result)).toContain(word);
    }
    expect(canaryText()).toBe('');
  });
});
