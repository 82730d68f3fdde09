// Shell startup files are where people keep their keys: `export OPENAI_API_KEY=sk-…` in
// `~/.bashrc`, `set -gx GITHUB_TOKEN ghp_…` in fish's config, `setenv AWS_SECRET_ACCESS_KEY …`.
// The CLI withholds the variables from the tools, but a sandboxed `cat ~/.bashrc` read them from
// the file — all of them, also those the CLI's own environment never held. The files stay (a
// shell reads them), shown as a copy with `***` for each such value (git-config-copies.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { credentialRuleOf, credentialValueRules } from '@agent/core/credentials';

/** What stands for a credential in the copy. */
const hidden = '***';

/** A startup file's text with its credentials replaced, and the credentials found. */
export interface StartupFileCredentials {
  /** The text with each credential replaced by `***` (the same text when none was found). */
  text: string;
  /** Each credential value as written (quotes removed), without duplicates. */
  secrets: string[];
}

// `export NAME=value`, `declare -x NAME=…`, `NAME=value`; fish's `set -gx NAME value`; csh's
// `setenv NAME value`. The value runs to the end of its quotes, or of its word.
const assignment =
  /^(\s*(?:(?:export|declare|typeset|readonly|local)(?:\s+-[A-Za-z]+)*\s+)?)([A-Za-z_][A-Za-z0-9_]*)(=)("(?:[^"\\]|\\.)*"|'[^']*'|[^\s;&|#]+)/;
const fishOrCsh =
  /^(\s*(?:set(?:\s+-[A-Za-z]+|\s+--[a-z-]+)*|setenv)\s+)([A-Za-z_][A-Za-z0-9_]*)(\s+)("(?:[^"\\]|\\.)*"|'[^']*'|[^\s;&|#]+)/;

/**
 * `text` (a shell startup file, `/etc/environment`) with `***` for the value of every variable a
 * name or value rule calls a credential (`export OPENAI_API_KEY=sk-…`, fish's `set -x`, csh's
 * `setenv`) that is written out (one made of `$…` or `$(…)` holds no key), and for every key of a
 * known format anywhere else on a line (an alias with `Authorization: Bearer ghp_…`, a comment).
 */
export function startupFileWithoutCredentials(text: string): StartupFileCredentials {
  const secrets = new Set<string>();
  const lines = text.split('\n').map((line) => {
    let result = line;
    const match = assignment.exec(line) ?? fishOrCsh.exec(line);
    if (match !== null) {
      const [whole, before = '', name = '', between = '', written = ''] = match;
      const quote = written.startsWith('"') || written.startsWith("'") ? written[0] : '';
      const value = quote === '' ? written : written.slice(1, -1);
      if (value !== '' && !/[$`]/.test(value) && credentialRuleOf(name, value) !== undefined) {
        secrets.add(value);
        result = `${before}${name}${between}${quote}${hidden}${quote}${line.slice(whole.length)}`;
      }
    }
    for (const rule of credentialValueRules) {
      const global = new RegExp(rule.pattern.source, `${rule.pattern.flags.replace('g', '')}g`);
      result = result.replace(global, (key) => {
        secrets.add(key);
        return hidden;
      });
    }
    return result;
  });
  if (secrets.size === 0) return { text, secrets: [] };
  return { text: lines.join('\n'), secrets: [...secrets] };
}

/** The shell startup files under the home, relative to it, that set variables. */
const startupFiles = [
  '.profile',
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.zshenv',
  '.zshrc',
  '.zprofile',
  '.zlogin',
  '.kshrc',
  '.mkshrc',
  '.cshrc',
  '.tcshrc',
  '.login',
  '.config/fish/config.fish',
  '.config/zsh/.zshenv',
  '.config/zsh/.zshrc',
  '.config/zsh/.zprofile',
];
/** Folders whose every file a startup file sources, by convention. */
const startupFolders = ['.bashrc.d', '.zshrc.d', '.config/fish/conf.d', '.profile.d'];

/**
 * The shell startup files, by real path, that exist as regular files: the home's (and those of
 * `ZDOTDIR`, when set), the files of the folders they source by convention (`~/.bashrc.d`,
 * fish's `conf.d`), and the system's `/etc/environment` and `/etc/profile.d`.
 */
export function startupFilesWithVariables(
  home: string,
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  const candidates = [...startupFiles.map((entry) => path.join(home, entry)), '/etc/environment'];
  const zdotdir = env.ZDOTDIR;
  if (zdotdir !== undefined && path.isAbsolute(zdotdir))
    for (const name of ['.zshenv', '.zshrc', '.zprofile', '.zlogin'])
      candidates.push(path.join(zdotdir, name));
  for (const folder of [...startupFolders.map((entry) => path.join(home, entry)), '/etc/profile.d'])
    for (const name of listing(folder)) candidates.push(path.join(folder, name));
  const found = new Set<string>();
  for (const candidate of candidates) {
    try {
      const real = fs.realpathSync(candidate);
      if (fs.statSync(real).isFile()) found.add(real);
    } catch {
      // Missing, dangling or unreadable: nothing to show.
    }
  }
  return [...found];
}

function listing(folder: string): string[] {
  try {
    return fs.readdirSync(folder);
  } catch {
    return [];
  }
}
