import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startupFilesWithVariables,
  startupFileWithoutCredentials,
} from './startup-file-credentials.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const key = `sk-proj-${'Xy7z'.repeat(10)}`;

describe('startupFileWithoutCredentials', () => {
  it.each([
    ['export, double quotes', `export OPENAI_API_KEY="${key}"`, 'export OPENAI_API_KEY="***"'],
    [
      'export, no quotes',
      `export OPENAI_API_KEY=${key} # mine`,
      'export OPENAI_API_KEY=*** # mine',
    ],
    ['a plain assignment', "DB_PASSWORD='letmein'", "DB_PASSWORD='***'"],
    ['declare -x', 'declare -x GITHUB_TOKEN=abc123', 'declare -x GITHUB_TOKEN=***'],
    ['fish', `set -gx OPENAI_API_KEY ${key}`, 'set -gx OPENAI_API_KEY ***'],
    ['csh', `setenv OPENAI_API_KEY "${key}"`, 'setenv OPENAI_API_KEY "***"'],
    [
      'a key in an alias',
      `alias ai='curl -H "x-api-key: ${key}"'`,
      `alias ai='curl -H "x-api-key: ***"'`,
    ],
    ['a key in a comment', `# old: ${key}`, '# old: ***'],
  ])('hides the value: %s', (_name, line, shown) => {
    const result = startupFileWithoutCredentials(`${line}\nexport EDITOR=vim\n`);
    expect(result.text).toBe(`${shown}\nexport EDITOR=vim\n`);
    expect(result.secrets.length).toBeGreaterThan(0);
  });

  it('keeps what holds no key: commands, references, ordinary settings', () => {
    const text = [
      'export PATH="$HOME/bin:$PATH"',
      'export GITHUB_TOKEN=$(gh auth token)',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell's reference, as written
      'export NPM_TOKEN="${NPM_TOKEN_FROM_VAULT}"',
      'export MAX_TOKENS=4096',
      'export AWS_PROFILE=work',
      'EMPTY_SECRET=',
      'set -gx EDITOR nvim',
      '',
    ].join('\n');
    expect(startupFileWithoutCredentials(text)).toEqual({ text, secrets: [] });
  });
});

describe('startupFilesWithVariables', () => {
  it("finds the home's files, those of ZDOTDIR, and the folders they source", () => {
    const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'startup-files-')));
    made.push(home);
    fs.mkdirSync(path.join(home, '.bashrc.d'));
    fs.mkdirSync(path.join(home, 'zsh'));
    for (const file of ['.bashrc', '.bashrc.d/keys.sh', 'zsh/.zshrc', '.vimrc'])
      fs.writeFileSync(path.join(home, file), '');
    const found = startupFilesWithVariables(home, { ZDOTDIR: path.join(home, 'zsh') });
    expect(found.filter((file) => file.startsWith(home)).sort()).toEqual(
      [
        path.join(home, '.bashrc'),
        path.join(home, '.bashrc.d', 'keys.sh'),
        path.join(home, 'zsh', '.zshrc'),
      ].sort(),
    );
  });
});
