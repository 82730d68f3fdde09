// What a trusted hook or MCP server runs is often a file of the project (`./.agent/hooks/fmt.sh`,
// `node scripts/server.mjs`, `npm run lint`): trust pinned to the command line alone let a later
// `git pull` change that file and run new code unasked. The files a command names are pinned too,
// by the SHA-256 of their content — and so are the project files those load in turn, as far as
// their text names them (script-references.ts).
import { createHash } from 'node:crypto';
import { realpathSync, type Stats } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { readRegularFileSync } from '@agent/core/regular-file';
import { largeFileDigest } from './large-file-digest.js';
import { venvSitePackages, virtualEnvironmentFiles } from './python-venv.js';
import { rubyIncludeFolders } from './ruby-references.js';
import { programWords, pythonModuleForms, scriptReferences } from './script-references.js';
import { runnerPaths, toolRunnerFiles } from './tool-runner-files.js';

/**
 * Files pinned for one command at most: those it names first, then those they load, nearest
 * first. Past it the rest is not pinned (the README says so).
 */
export const maxPinnedFiles = 64;
/** Larger files are hashed in chunks, their text not searched for loads (large-file-digest.ts). */
const maxHashedBytes = 1024 * 1024;

/**
 * The project config of the package runners, which says how they run anything: `.npmrc`'s
 * `script-shell` is the shell npm and npx run a command with and its `node-options` a
 * NODE_OPTIONS (`--require ./x.cjs`); `.yarnrc.yml`'s `yarnPath` is the yarn that runs;
 * `.pnpmfile.cjs` runs in pnpm; `bunfig.toml`'s `preload` in bun. Bundler evaluates the Gemfile
 * (and `.bundle/config` may name another) as Ruby, rake its Rakefile.
 */
const npmConfig = ['.npmrc'];
const yarnConfig = ['.yarnrc', '.yarnrc.yml', '.npmrc'];
const pnpmConfig = ['.npmrc', '.pnpmfile.cjs'];
const bunConfig = ['bunfig.toml'];

/** Programs that run what a project file of theirs says: the files are pinned with them. */
const runnerFiles: Record<string, readonly string[]> = {
  npm: ['package.json', ...npmConfig],
  npx: npmConfig,
  pnpm: ['package.json', ...pnpmConfig],
  pnpx: pnpmConfig,
  yarn: ['package.json', ...yarnConfig],
  bun: ['package.json', ...bunConfig],
  bunx: bunConfig,
  make: ['Makefile', 'makefile', 'GNUmakefile'],
  just: ['justfile', 'Justfile'],
  bundle: ['Gemfile', 'gems.rb', '.bundle/config'],
  bundler: ['Gemfile', 'gems.rb', '.bundle/config'],
  rake: ['Rakefile', 'rakefile', 'Rakefile.rb', 'rakefile.rb'],
  ...toolRunnerFiles,
};

/**
 * The folders of a `PYTHONPATH` value that lie in the project at `root` (where hooks and servers
 * run: a relative entry, or an empty one, is from there), where Python finds a module before the
 * installed ones.
 */
export function pythonPathFolders(value: string | undefined, root: string): string[] {
  if (value === undefined || value === '') return [];
  return value
    .split(delimiter)
    .map((entry) => resolve(root, entry))
    .filter((folder) => isInside(root, folder));
}

/**
 * The folders in the project of each `<name>=…` (`PYTHONPATH`, `NODE_PATH`) a command line sets
 * for a program it runs (`PYTHONPATH=lib python3 x.py`, `env NODE_PATH=./lib …`, `export …; …`).
 */
function commandPathList(line: string, name: string, root: string): string[] {
  const assignment = new RegExp(
    `(?:^|[\\s;&|("'])${name}=(?:"([^"]*)"|'([^']*)'|([^\\s;&|)"']*))`,
    'g',
  );
  return [...line.matchAll(assignment)].flatMap((match) =>
    pythonPathFolders(
      (match[1] ?? match[2] ?? match[3])?.replace(
        /\$\{?(?:AGENT_PROJECT_DIR|CLAUDE_PROJECT_DIR)\}?/g,
        root,
      ),
      root,
    ),
  );
}

/**
 * What Python loads at its start from the folders of `PYTHONPATH` (`name` the variable, `value`
 * its value): `sitecustomize.py` and `usercustomize.py` in each folder — an empty entry
 * (`/opt/lib:`) is the folder it runs in — there or not, as a file made there later counts. None
 * for another variable.
 */
export function pythonStartupFiles(name: string, value: string): string[] {
  if (name !== 'PYTHONPATH') return [];
  return value
    .split(delimiter)
    .map((entry) => (entry === '' ? '.' : entry))
    .flatMap((folder) => [join(folder, 'sitecustomize.py'), join(folder, 'usercustomize.py')]);
}

/** A config file's names with each extension a tool accepts for it (`name`, `name.js`…). */
function withExtensions(name: string, extensions: readonly string[]): string[] {
  return extensions.map((extension) => (extension === '' ? name : `${name}.${extension}`));
}
const codeExtensions = ['js', 'cjs', 'mjs', 'ts', 'cts', 'mts'];
const dataExtensions = ['', 'json', 'json5', 'yaml', 'yml', 'toml'];

/**
 * Formatters and linters that load a project file of theirs as code — a `.prettierrc.cjs` or an
 * `eslint.config.js` runs in the tool's process, and a JSON one's `plugins` may name a project
 * script: the project-root configs are pinned with them. A sandboxed command could otherwise
 * write one, and the user's `npx prettier --write` hook would run it outside the sandbox.
 * So are their keys of package.json (below). Configs in subfolders and shared configs from
 * `node_modules` are not.
 */
const configFiles: Record<string, readonly string[]> = {
  prettier: [
    ...withExtensions('.prettierrc', [...dataExtensions, ...codeExtensions]),
    ...withExtensions('prettier.config', codeExtensions),
  ],
  eslint: [
    ...withExtensions('eslint.config', codeExtensions),
    ...withExtensions('.eslintrc', ['', 'js', 'cjs', 'json', 'yaml', 'yml']),
  ],
  stylelint: [
    ...withExtensions('stylelint.config', codeExtensions),
    ...withExtensions('.stylelintrc', [...dataExtensions, ...codeExtensions]),
  ],
  'lint-staged': [
    ...withExtensions('.lintstagedrc', [...dataExtensions, ...codeExtensions]),
    ...withExtensions('lint-staged.config', codeExtensions),
  ],
};
configFiles.prettierd = configFiles.prettier as readonly string[];
configFiles.eslint_d = configFiles.eslint as readonly string[];

/**
 * The keys of the project-root `package.json` those tools take as their config: prettier's
 * `"prettier": "./x.cjs"` is a module it requires, eslintrc's `eslintConfig` may extend a project
 * file, lint-staged's commands run. Each is pinned on its own (`package.json#prettier`), with the
 * project files it names: the rest of the file changes as work does (a dependency added).
 */
const packageConfigKeys: Record<string, string> = {
  prettier: 'prettier',
  prettierd: 'prettier',
  eslint: 'eslintConfig',
  eslint_d: 'eslintConfig',
  stylelint: 'stylelint',
  'lint-staged': 'lint-staged',
};

/**
 * What a runner reads (`npm` → `package.json`), by the word's own entry only: `constructor` or
 * `toString` in a command line is no runner (a plain lookup found Object's methods and threw).
 */
function runnerFilesOf(word: string): readonly string[] | undefined {
  const program = word.replace(/^.*\//, '');
  return Object.hasOwn(runnerFiles, program) ? runnerFiles[program] : undefined;
}

/** The tool a word names (`node_modules/.bin/eslint` → `eslint`, `prettier@3` → `prettier`). */
function programOf(word: string): string {
  return word.replace(/^.*\//, '').replace(/@[^@/]*$/, '');
}

/** The configs `word` loads as code when it names one of those tools (`prettier`, `node_modules/.bin/eslint`, `prettier@3`). */
function configsOf(word: string): readonly string[] {
  const program = programOf(word);
  return Object.hasOwn(configFiles, program) ? (configFiles[program] ?? []) : [];
}

/**
 * The project files Python may load for the module `name` given to an interpreter (`python3 -m
 * json.tool`): `-m` puts the folder it runs in (`root`) first on sys.path, so a `json.py` there
 * is what runs — or a `json.pyc`, a `json.so`. Each package on the way (`json/__init__.py`) and
 * the module's own files, each in every form Python takes, or none when the word is no module
 * name (a script path).
 */
function pythonModuleFiles(interpreter: string, name: string, bases: readonly string[]): string[] {
  if (!/^python[\d.]*$/.test(programOf(interpreter))) return [];
  if (!/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/.test(name) || name.endsWith('.py')) return [];
  const parts = name.split('.');
  return bases.flatMap((base) =>
    parts.flatMap((part, i) => {
      const path = join(base, ...parts.slice(0, i + 1));
      const own = i === parts.length - 1 ? pythonModuleForms(path, '__main__') : [];
      return [
        ...pythonModuleForms(join(base, ...parts.slice(0, i)), part),
        ...pythonModuleForms(path, '__init__'),
        ...own,
      ];
    }),
  );
}

/**
 * The code a command line gives an interpreter inline, as a file of that language would name it
 * (`<root>/inline.py`): `python3 -c "import json, sys; …"` — `-c` puts the folder it runs in (the
 * project root, for hooks) first on sys.path, so a `json.py` there is what `import json` runs —
 * and `node -e "require('./scripts/notify')…"` (also `-p`, `--eval`, `--print`).
 */
function inlineCode(line: string, root: string): { file: string; code: string }[] {
  const inline =
    /\b(python[\d.]*|node)\s+(?:-[A-Za-z-]+\s+)*?(?:-c|-e|-p|--eval|--print)(?:\s+|=)(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+))/g;
  return [...line.matchAll(inline)].map((match) => {
    const code = match[2] ?? match[3] ?? match[4] ?? '';
    return match[1] === 'node'
      ? { file: join(root, 'inline.js'), code }
      : { file: join(root, 'inline.py'), code: code.replaceAll(';', '\n') };
  });
}

/** The package.json key `word`'s tool takes as its config, if it names one of those tools. */
function packageConfigKeyOf(word: string): string | undefined {
  const program = programOf(word);
  return Object.hasOwn(packageConfigKeys, program) ? packageConfigKeys[program] : undefined;
}

/**
 * The pin of `key` in the package.json at `path` — `sha256:` of its value as JSON — and the
 * relative paths its strings name; undefined when the file or the key is not there.
 */
function packageKeyDigest(path: string, key: string): Digested | undefined {
  const outcome = readRegularFileSync(path, { maxBytes: maxHashedBytes });
  if (outcome.kind !== 'read') return undefined;
  let value: unknown;
  try {
    const manifest: unknown = JSON.parse(Buffer.from(outcome.bytes).toString('utf8'));
    if (manifest === null || typeof manifest !== 'object' || !Object.hasOwn(manifest, key))
      return undefined;
    value = (manifest as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
  const text = JSON.stringify(value) ?? 'undefined';
  // Resolved as require does: `./x` may be x.js, x.cjs… or x/index.js.
  const references = [...text.matchAll(/"(\.\.?\/[^"]*)"/g)].flatMap((match) => {
    const named = match[1] ?? '';
    return [named, ...withExtensions(named, codeExtensions), join(named, 'index.js')];
  });
  return { digest: `sha256:${createHash('sha256').update(text).digest('hex')}`, references };
}

/** Programs that run a package's bin, the project's own first (`npx eslint`). */
const packageBinRunners = new Set(['npx', 'bunx', 'pnpx']);

/** The words of a command line that could name a file: unquoted, the project variables expanded. */
function words(command: readonly string[], project: string): string[] {
  return command
    .flatMap((part) => part.split(/[\s;&|()<>`]+/))
    .map((word) =>
      word
        .replace(/['"]/g, '')
        .replace(/\$\{?(?:AGENT_PROJECT_DIR|CLAUDE_PROJECT_DIR)\}?/g, project)
        .replace(/^--?[\w-]+=/, ''),
    )
    .filter((word) => word !== '' && !word.startsWith('-') && !word.includes('$'));
}

/** Compared by segments: `<root>/..x` (a name that starts with two dots) lies inside. */
function isInside(root: string, path: string): boolean {
  const rest = relative(root, path);
  return rest === '' || (rest !== '..' && !rest.startsWith(`..${sep}`) && !isAbsolute(rest));
}

/** Folders of the project where a command's programs look for what they run or import. */
export interface SearchFolders {
  /** PATH's (absolute): the programs shell scripts and Makefiles run by name. */
  programs: readonly string[];
  /** PYTHONPATH's: the modules Python scripts import. */
  python: readonly string[];
  /** NODE_PATH's: the bare specifiers Node scripts require, after node_modules. */
  node: readonly string[];
  /** PERL5LIB's (or PERLLIB's): the modules Perl scripts `use`, first in @INC. */
  perl: readonly string[];
  /** RUBYLIB's and `ruby -I`'s: the features Ruby scripts `require`. */
  ruby: readonly string[];
}

/** A file's pin and the paths its text names (tried as loads). */
export interface Digested {
  digest: string;
  references: readonly string[];
  /**
   * The folders a shell script or package.json's scripts put on PYTHONPATH and NODE_PATH for the
   * programs it runs (`export PYTHONPATH=lib`), searched for the files pinned after it.
   */
  sets?: { python: readonly string[]; node: readonly string[] };
}

/** Files read for pins already, by device and inode (one per start). */
export type FileDigestCache = Map<string, Digested>;

/** `sha256:<hex>` of a regular file (opened without blocking; read in chunks past the limit), or undefined. */
function digestOf(
  path: string,
  root: string,
  cache: Map<string, Digested>,
  search: SearchFolders,
): Digested | undefined {
  let cached: Digested | undefined;
  const outcome = readRegularFileSync(path, {
    maxBytes: maxHashedBytes,
    // One file named by many commands (a hundred hooks, one script) is read and hashed once.
    check: ({ stats }) => {
      cached = cache.get(identityOf(stats, search));
      return cached === undefined ? undefined : 'digested already';
    },
  });
  switch (outcome.kind) {
    case 'read': {
      const programs = programWords(path, outcome.bytes);
      const text =
        programs.length === 0
          ? ''
          : Buffer.from(outcome.bytes.subarray(0, maxHashedBytes)).toString('utf8');
      const digested = {
        digest: `sha256:${createHash('sha256').update(outcome.bytes).digest('hex')}`,
        references: [
          ...scriptReferences(
            path,
            outcome.bytes,
            root,
            search.python,
            search.node,
            search.perl,
            search.ruby,
          ),
          // The programs a shell script or Makefile runs by name where PATH finds them in the project.
          ...programs.flatMap((word) => search.programs.map((folder) => join(folder, word))),
        ],
        sets: {
          python: commandPathList(text, 'PYTHONPATH', root),
          node: commandPathList(text, 'NODE_PATH', root),
        },
      };
      cache.set(identityOf(outcome.stats, search), digested);
      return digested;
    }
    case 'refused':
      return cached;
    case 'too-large': {
      // Hashed too, in chunks: a same-size replacement kept a size-only pin (large-file-digest.ts).
      const digest = largeFileDigest(path, outcome.stats);
      return digest === undefined ? undefined : { digest, references: [] };
    }
    default:
      return undefined;
  }
}

/** A file's identity, with the folders its references were looked for in (they differ by command). */
function identityOf(stats: Stats, search: SearchFolders): string {
  return `${stats.dev}:${stats.ino}\0${search.programs.join('\0')}\0\0${search.python.join('\0')}\0\0${search.node.join('\0')}\0\0${search.perl.join('\0')}\0\0${search.ruby.join('\0')}`;
}

/**
 * The project files a command names — each word that is a path (against the project root, where
 * hooks run) to a regular file inside the project, and the file a runner reads (`npm` →
 * `package.json`, `make` → `Makefile`) — each with its digest; undefined when it names none, so
 * the pin of a command that runs no project file is what it always was.
 */
export function projectFileDigests(
  command: readonly string[],
  project: string,
  options: {
    /**
     * Digests already taken, by file (pass one map for all the commands of a start: a settings
     * file whose hundred hooks name one script reads it once, not a hundred times).
     */
    cache?: FileDigestCache;
    /**
     * Filled with every path tried as a file of the pin, there or not: while none of them is
     * changed, made or removed (by its stat), the pin is what it was (hook-file-pins.ts).
     */
    looked?: Set<string>;
    /**
     * Where the command's programs look, in the project [none]. PATH's within a session only
     * (hook-file-pins.ts: a trust pin must not differ with the shell the CLI starts from);
     * PYTHONPATH's at trust time too, as the settings set it (project-trust.ts).
     */
    search?: Partial<SearchFolders>;
    /**
     * Whole command lines whose inline code (`python3 -c "…"`, `node -e "…"`) is read for what it loads, when
     * `command` holds only the words that run (hook-file-pins.ts) [none; `command`'s own are].
     */
    inline?: readonly string[];
  } = {},
): Record<string, string> | undefined {
  const cache = options.cache ?? new Map();
  let root: string;
  try {
    root = realpathSync(project);
  } catch {
    return undefined;
  }
  const named = words(command, root);
  const lines = [...command, ...(options.inline ?? [])];
  // A venv's python (or another of its programs) running a project script: the script's imports
  // load from that venv's site-packages too (`.venv/bin/python scripts/x.py` importing `helpers`
  // installed there), where a sandboxed command may write.
  const search: SearchFolders & { python: string[]; node: string[] } = {
    programs: options.search?.programs ?? [],
    python: [
      ...(options.search?.python ?? []),
      // `PYTHONPATH=lib python3 scripts/check.py`: the command's own assignment.
      ...lines.flatMap((line) => commandPathList(line, 'PYTHONPATH', root)),
      ...new Set(named.flatMap((word) => venvSitePackages(resolve(root, word)))),
    ],
    node: [
      ...(options.search?.node ?? []),
      ...lines.flatMap((line) => commandPathList(line, 'NODE_PATH', root)),
    ],
    perl: [
      ...(options.search?.perl ?? []),
      ...lines.flatMap((line) => [
        ...commandPathList(line, 'PERL5LIB', root),
        ...commandPathList(line, 'PERLLIB', root),
      ]),
    ],
    ruby: [
      ...(options.search?.ruby ?? []),
      // `RUBYLIB=lib ruby x.rb`, `ruby -Ilib x.rb`.
      ...lines.flatMap((line) => [
        ...commandPathList(line, 'RUBYLIB', root),
        ...rubyIncludeFolders(line, root).filter((folder) => isInside(root, folder)),
      ]),
    ],
  };
  const digests: Record<string, string> = {};
  let count = 0;
  const venvs = new Set<string>();
  // Files pinned whose loads are still to be looked at, nearest first.
  const queue: string[][] = [];
  const add = (candidate: string) => {
    if (count >= maxPinnedFiles) return;
    const lexical = resolve(root, candidate);
    options.looked?.add(lexical);
    let real: string;
    try {
      real = realpathSync(lexical);
    } catch {
      return;
    }
    // A project path is pinned wherever its link leads (a link to a file in /tmp that anyone may
    // rewrite is the project's choice too); other paths only when they lead into the project.
    const inProject = isInside(root, lexical);
    if (!inProject && !isInside(root, real)) return;
    // A program of a venv in the project: what its python loads at every start, once per venv.
    const venv = dirname(dirname(lexical));
    if (basename(dirname(lexical)) === 'bin' && !venvs.has(venv)) {
      venvs.add(venv);
      for (const file of virtualEnvironmentFiles(lexical)) add(file);
    }
    const name = relative(root, inProject ? lexical : real);
    if (name === '' || digests[name] !== undefined) return;
    const digested = digestOf(real, root, cache, search);
    if (digested === undefined) return;
    digests[name] = digested.digest;
    count++;
    // `export PYTHONPATH=lib` in a hook's script: the Python it runs next imports from there.
    for (const folder of digested.sets?.python ?? [])
      if (!search.python.includes(folder)) search.python.push(folder);
    for (const folder of digested.sets?.node ?? [])
      if (!search.node.includes(folder)) search.node.push(folder);
    queue.push([...digested.references]);
  };
  // A package.json key a tool takes as its config, pinned under `package.json#<key>`.
  const addPackageKey = (key: string) => {
    const manifest = join(root, 'package.json');
    options.looked?.add(manifest);
    const name = `package.json#${key}`;
    if (count >= maxPinnedFiles || digests[name] !== undefined) return;
    const digested = packageKeyDigest(manifest, key);
    if (digested === undefined) return;
    digests[name] = digested.digest;
    count++;
    queue.push([...digested.references]);
  };
  // `python3 -c "import json…"`, `node -e "require('./x')…"`: what the code loads.
  for (const line of lines)
    for (const { file, code } of inlineCode(line, root))
      queue.push(
        scriptReferences(
          file,
          Buffer.from(code),
          root,
          search.python,
          search.node,
          search.perl,
          search.ruby,
        ),
      );
  named.forEach((word, i) => {
    add(word);
    for (const file of runnerFilesOf(word) ?? [])
      for (const path of runnerPaths(root, file)) add(path);
    for (const file of configsOf(word)) add(join(root, file));
    const key = packageConfigKeyOf(word);
    if (key !== undefined) addPackageKey(key);
    for (const file of pythonModuleFiles(named[i - 1] ?? '', word, [root, ...search.python]))
      add(file);
    // `npx eslint`, `pnpm exec eslint`, `bunx x`: the project's own node_modules/.bin/eslint runs.
    const previous = named[i - 1];
    const runsPackageBin =
      packageBinRunners.has(word.replace(/^.*\//, '')) ||
      ((word === 'exec' || word === 'dlx') &&
        previous !== undefined &&
        runnerFilesOf(previous) !== undefined);
    const bin = named[i + 1];
    if (runsPackageBin && bin !== undefined && !bin.includes('/'))
      add(join(root, 'node_modules', '.bin', bin.replace(/@[^@/]*$/, '')));
  });
  for (let next = queue.shift(); next !== undefined; next = queue.shift())
    for (const reference of next) add(reference);
  return count === 0 ? undefined : digests;
}
