// What a Ruby file that a trusted hook or server runs loads in turn. `require_relative 'helper'`
// names no extension (nor `lib/helper`), and `require 'helper'` a feature found on the load path:
// neither word is a path to an existing file, so the words of the text did not reach them — a
// sandboxed command rewrote `scripts/hooks/helper.rb`, and the next `ruby scripts/hooks/check.rb`
// hook ran it as the user, outside the sandbox. Bundler's Gemfile is Ruby too (its `gemspec`
// evaluates the project's `*.gemspec`), and rake's Rakefile (with every `rakelib/*.rake`).
import { readdirSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';

const rubyNames = new Set(['Gemfile', 'gems.rb', 'Rakefile', 'rakefile', 'Guardfile']);

/** Whether `path` (with `text`) is Ruby: by its extension, its name, or its `#!`. */
export function isRuby(path: string, text: string): boolean {
  return (
    /\.(?:rb|rake|gemspec|ru)$/.test(path) ||
    rubyNames.has(basename(path)) ||
    /^#!.*\bruby\b/.test(text)
  );
}

/** The entries of `folder` that end with `suffix`, as paths (none when it cannot be read). */
function entriesEnding(folder: string, suffix: string): string[] {
  try {
    return readdirSync(folder)
      .filter((name) => name.endsWith(suffix))
      .map((name) => join(folder, name));
  } catch {
    return [];
  }
}

/** What Ruby tries for a feature `base` (`lib/helper`): as written, `.rb`, a compiled `.so`. */
function features(base: string): string[] {
  return base.endsWith('.rb') ? [base] : [base, `${base}.rb`, `${base}.so`];
}

/**
 * The folders the `$LOAD_PATH` (`$:`) lines of the Ruby file `path` add, each of its quoted
 * values taken from where that line means it: `File.expand_path('lib', __dir__)` and
 * `File.join(File.dirname(__FILE__), 'lib')` from the file's folder, `File.expand_path('../lib',
 * __FILE__)` from the file itself, a bare `'lib'` from where it runs (the project root).
 */
function loadPathFolders(text: string, path: string, root: string): string[] {
  const folders: string[] = [];
  const folder = dirname(path);
  for (const line of text.matchAll(/^.*(?:\$LOAD_PATH|\$:)[^\n]*$/gm)) {
    const code = line[0];
    for (const quoted of code.matchAll(/(["'])([^"'\n]*)\1/g)) {
      const value = quoted[2] ?? '';
      if (/__dir__|dirname\(\s*__FILE__\s*\)/.test(code)) folders.push(resolve(folder, value));
      else if (/__FILE__/.test(code)) folders.push(resolve(path, value));
      else folders.push(resolve(root, value));
    }
  }
  return folders;
}

/**
 * The project files the Ruby file `path` may load: `require_relative` from its folder,
 * `require`/`load` of a feature in each folder of the load path it could use (`rubyPath`:
 * RUBYLIB's and `-I`'s in the project; and those its `$LOAD_PATH` lines add), a path from where
 * it runs; a Gemfile's `gemspec` (every `*.gemspec` beside it) and a Rakefile's `rakelib/*.rake`.
 */
export function rubyCandidates(
  text: string,
  path: string,
  root: string,
  rubyPath: readonly string[],
): string[] {
  const folder = dirname(path);
  const candidates: string[] = [];
  const libs = [...rubyPath, ...loadPathFolders(text, path, root)];
  for (const match of text.matchAll(/\brequire_relative\b\s*\(?\s*(["'])([^"'\n]+)\1/g))
    candidates.push(...features(resolve(folder, match[2] ?? '')));
  for (const match of text.matchAll(/\b(?:require|load)\b\s*\(?\s*(["'])([^"'\n]+)\1/g)) {
    const feature = match[2] ?? '';
    if (isAbsolute(feature)) candidates.push(...features(feature));
    else if (/^\.\.?\//.test(feature)) candidates.push(...features(resolve(root, feature)));
    else for (const lib of libs) candidates.push(...features(join(lib, feature)));
  }
  const name = basename(path);
  if ((name === 'Gemfile' || name === 'gems.rb') && /^\s*gemspec\b/m.test(text))
    candidates.push(...entriesEnding(folder, '.gemspec'));
  if (/^(?:Rakefile|rakefile)(?:\.rb)?$/.test(name))
    candidates.push(...entriesEnding(join(folder, 'rakelib'), '.rake'));
  return candidates;
}

/**
 * The folders in the project a command line puts on Ruby's load path: `-I lib` / `-Ilib` given to
 * `ruby` (or in a `RUBYOPT` it sets); relative ones from `root`, where it runs.
 */
export function rubyIncludeFolders(line: string, root: string): string[] {
  if (!/\bruby[\d.]*\b|RUBYOPT=/.test(line)) return [];
  return [...line.matchAll(/(?:^|[\s"'])-I\s*([^\s;&|"')]+)/g)].map((match) =>
    resolve(root, match[1] ?? ''),
  );
}
