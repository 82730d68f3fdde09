import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gitConfigIncludePaths, includedConfigFiles } from './git-config-includes.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('gitConfigIncludePaths', () => {
  it('reads [include] and [includeIf] paths, quoted or not, and nothing else', () => {
    const text = [
      '[core]',
      '\tpath = not/an/include',
      '[include]',
      '\tpath = ../shared.gitconfig ; a comment',
      '[includeIf "gitdir:~/work/"]',
      '\tpath = "work.gitconfig"',
      '[user]',
      '\tname = x',
    ].join('\n');
    expect(gitConfigIncludePaths(text)).toEqual(['../shared.gitconfig', 'work.gitconfig']);
  });
});

describe('includedConfigFiles', () => {
  it('follows includes in turn, inside the roots only, existing files only, never the home', () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'git-includes-')));
    made.push(root);
    const git = path.join(root, '.git');
    fs.mkdirSync(git);
    fs.writeFileSync(
      path.join(git, 'config'),
      '[include]\n\tpath = ../a.gitconfig\n\tpath = ../missing.gitconfig\n\tpath = /etc/gitconfig\n\tpath = ~/.gitconfig\n',
    );
    fs.writeFileSync(path.join(root, 'a.gitconfig'), '[include]\n\tpath = b.gitconfig\n');
    fs.writeFileSync(
      path.join(root, 'b.gitconfig'),
      '[include]\n\tpath = a.gitconfig\n\tpath = dangling.gitconfig\n',
    );
    // A dangling link (bubblewrap could not bind it) is left out, as a file not made yet is.
    fs.symlinkSync(path.join(root, 'nowhere'), path.join(root, 'dangling.gitconfig'));
    expect(includedConfigFiles(git, [root]).sort()).toEqual([
      path.join(root, 'a.gitconfig'),
      path.join(root, 'b.gitconfig'),
    ]);
  });
});
