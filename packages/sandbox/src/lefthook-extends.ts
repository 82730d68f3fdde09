// lefthook merges the files a configuration's `extends:` names (paths from the repository's
// root, in turn: an extended file may extend others) before it runs a hook's jobs. The
// configuration itself is kept read-only; a file it extends elsewhere in the workspace
// (`extends: [ci/lefthook-base.yml]`) was a command's to rewrite, and the jobs added there ran
// at the user's next commit, outside the sandbox.
import * as path from 'node:path';
import { readConfig } from './git-config-includes.js';

/** How deep `extends:` is followed. */
const maxExtendsDepth = 10;

/**
 * The entries of a lefthook configuration's `extends` list, in any of its formats: a YAML block
 * (`extends:` then `- path` lines) or flow list, a YAML scalar, TOML's `extends = [...]`, JSON's
 * `"extends": [...]`. Read loosely on purpose: something that may be an entry counts (it is only
 * kept read-only).
 */
export function lefthookExtendsEntries(text: string): string[] {
  const entries: string[] = [];
  const add = (raw: string) => {
    const value = raw
      .replace(/\s#.*$/, '')
      .trim()
      .replace(/,$/, '')
      .trim()
      .replace(/^["'](.*)["']$/, '$1');
    if (value !== '' && !/^[[\]{}]$/.test(value)) entries.push(value);
  };
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const key = /^\s*["']?extends["']?\s*[:=]\s*(.*)$/.exec(lines[index] ?? '');
    if (key === null) continue;
    const rest = (key[1] ?? '').replace(/^\s*#.*$/, '').trim();
    if (rest.startsWith('[')) {
      let list = rest;
      while (!list.includes(']') && index + 1 < lines.length) list += `\n${lines[++index] ?? ''}`;
      const inside = list.slice(1, list.includes(']') ? list.indexOf(']') : undefined);
      for (const item of inside.split(/[,\n]/)) add(item);
    } else if (rest === '') {
      while (index + 1 < lines.length && /^\s*-\s/.test(lines[index + 1] ?? ''))
        add((lines[++index] ?? '').replace(/^\s*-\s*/, ''));
    } else add(rest);
  }
  return entries;
}

/** The formats of lefthook's configuration files, in the order it looks for them. */
export const lefthookExtensions = ['.yml', '.yaml', '.toml', '.json', '.jsonc'];

/** lefthook's configuration files, relative to the root: main and `-local`, in every format. */
const configNames = ['lefthook', '.lefthook', '.config/lefthook'].flatMap((base) =>
  ['', '-local'].flatMap((local) =>
    lefthookExtensions.map((extension) => `${base}${local}${extension}`),
  ),
);

/**
 * The files the lefthook configurations at `root` extend (`extends:`), in turn, as lefthook finds
 * them: relative to `root` (the repository's top), or absolute; existing or not.
 */
export function lefthookExtendedFiles(root: string): string[] {
  const configs = configNames.map((name) => path.join(root, name));
  const found = new Set<string>();
  const visit = (config: string, depth: number) => {
    if (depth > maxExtendsDepth) return;
    const text = readConfig(config);
    if (text === undefined) return;
    for (const entry of lefthookExtendsEntries(text)) {
      const file = path.isAbsolute(entry) ? entry : path.join(root, entry);
      if (found.has(file)) continue;
      found.add(file);
      visit(file, depth + 1);
    }
  };
  for (const config of configs) visit(config, 0);
  return [...found];
}
