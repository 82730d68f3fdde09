// `hooksDirectories` asks git where the repository's hooks are, outside the sandbox, when a
// sandbox is made and again when git's configuration changes. It ran the first `git` on PATH: a
// PATH with a folder of the workspace (an activated `.venv/bin`, `./node_modules/.bin`, `.`) ran
// the `git` a sandboxed command put there, as the user, outside the sandbox.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hooksDirectories } from './auto-run-files.js';

const made: string[] = [];
const searchPath = process.env.PATH;
afterEach(() => {
  process.env.PATH = searchPath;
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A repository whose hooks are in `.githooks`, with a `git` planted in `bin` inside it. */
function repositoryWithPlantedGit(bin: string) {
  const dir = mkdtempSync(join(tmpdir(), 'agent-sandbox-hooks-git-'));
  made.push(dir);
  const root = join(dir, 'repo');
  execFileSync('git', ['init', '-q', root]);
  execFileSync('git', ['-C', root, 'config', 'core.hooksPath', '.githooks']);
  const canary = join(dir, 'planted-git-ran');
  mkdirSync(join(root, bin), { recursive: true });
  writeFileSync(join(root, bin, 'git'), `#!/bin/sh\ntouch '${canary}'\n`, { mode: 0o755 });
  return { root, canary };
}

describe("hooksDirectories: the git it runs is not the workspace's", () => {
  it.each([
    ['.venv/bin', (root: string) => join(root, '.venv/bin')],
    ['node_modules/.bin', (root: string) => join(root, 'node_modules/.bin')],
  ])('a git planted in %s, first on PATH, is not run', (bin, entry) => {
    const { root, canary } = repositoryWithPlantedGit(bin);
    process.env.PATH = `${entry(root)}:${searchPath ?? ''}`;
    expect(hooksDirectories(root)).toEqual([join(root, '.githooks')]);
    expect(existsSync(canary)).toBe(false);
  });

  it('a relative PATH entry (.) is not searched for it', () => {
    const { root, canary } = repositoryWithPlantedGit('.');
    const cwd = process.cwd();
    process.chdir(root);
    try {
      process.env.PATH = `.:${searchPath ?? ''}`;
      expect(hooksDirectories(root)).toEqual([join(root, '.githooks')]);
    } finally {
      process.chdir(cwd);
    }
    expect(existsSync(canary)).toBe(false);
  });
});
