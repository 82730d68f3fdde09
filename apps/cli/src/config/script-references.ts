// What a project file that a trusted hook or server runs loads in turn: `node ./hooks/run.mjs`
// importing `./lib.mjs`, `bash hook.sh` sourcing `./env.sh`, a Python script importing its
// `helpers.py`, a Makefile's `include` and recipes, package.json's scripts. Pinning only the file
// the command names let a `git pull` change the file it loads and run new code unasked.
//
// Found statically, by reading the text: every word of it that names a project file (a path with a
// `/` or an extension — the commands of a shell script, a JavaScript string literal, a JSON
// value), JavaScript import specifiers without their extension, Python imports. A path computed
// at run time (`require(name)`, `source "$DIR/$FILE"`) cannot be seen; nor can a package's
// dependencies beyond what `node_modules/<name>` holds. The README says so.
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { readRegularFileSync } from '@agent/core/regular-file';
import { isRuby, rubyCandidates } from './ruby-references.js';

/** The most distinct words of one file tried as paths (the rest of a huge file is not looked at). */
const maxWordsPerFile = 2000;
/** How much of a file's text is read for references (it is hashed whole, up to the pin limit). */
const maxScannedChars = 256 * 1024;

const javascriptExtensions = ['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts', '.jsx', '.tsx'];
const javascriptLike = /\.(?:[cm]?[jt]s|[jt]sx)$/;

type Language = 'javascript' | 'python' | 'perl' | 'ruby' | 'other';

function languageOf(path: string, text: string): Language {
  if (javascriptLike.test(path)) return 'javascript';
  if (isRuby(path, text)) return 'ruby';
  if (path.endsWith('.py')) return 'python';
  if (/\.(?:pl|pm|t)$/.test(path)) return 'perl';
  const shebang = /^#!.*\b(node|bun|deno|tsx|ts-node|python[0-9.]*|perl)\b/.exec(text);
  if (shebang?.[1] === 'perl') return 'perl';
  if (shebang?.[1] !== undefined) return shebang[1].startsWith('python') ? 'python' : 'javascript';
  return 'other';
}

/**
 * The words of `text` that may name a file: split at blanks, quotes and shell or code
 * punctuation, a leading `--flag=` dropped. One whose start is a variable
 * (`"$(dirname "$0")/env.sh"`, `${DIR}/lib.sh`) gives what follows it, against the file's folder.
 */
function pathWords(text: string, folder: string): string[] {
  const found = new Set<string>();
  const words = text
    // Comment lines of shell scripts, Makefiles and Python: prose, not loads.
    .replace(/^[ \t]*#(?!!).*$/gm, '')
    .split(/[\s'"`()[\]{},;<>|&=]+/);
  for (const raw of words) {
    if (found.size >= maxWordsPerFile) break;
    if (raw.length === 0 || raw.length > 4096) continue;
    const word = raw.replace(/^--?[\w-]+=/, '');
    const dollar = word.lastIndexOf('$');
    if (dollar >= 0) {
      // `$(dirname "$0")/env.sh` splits at the parentheses into `/env.sh`; `${DIR}/env.sh` into
      // `$`, `DIR`, `/env.sh` — either way the rest after a variable is taken from the file's folder.
      const slash = word.indexOf('/', dollar);
      if (slash >= 0) found.add(join(folder, word.slice(slash + 1)));
      continue;
    }
    if (!word.includes('/') && !/\.[A-Za-z0-9]+$/.test(word)) continue;
    found.add(word);
  }
  // A word that starts with `/` right after a split variable (`$(dirname "$0")` then `/env.sh`)
  // is more likely the rest of a path from the file's folder than an absolute path: try both.
  for (const word of [...found])
    if (word.startsWith('/') && !word.startsWith(folder)) found.add(join(folder, word));
  return [...found];
}

/** `./lib` as Node would try it: as written, with each extension, as a folder's index. */
function javascriptCandidates(specifier: string, folder: string, root: string): string[] {
  if (specifier.startsWith('#')) return subpathImportCandidates(specifier, folder, root);
  if (specifier.startsWith('./') || specifier.startsWith('../') || isAbsolute(specifier)) {
    const base = resolve(folder, specifier);
    return [
      base,
      ...javascriptExtensions.map((extension) => `${base}${extension}`),
      `${base}.json`,
      ...javascriptExtensions.map((extension) => join(base, `index${extension}`)),
    ];
  }
  // A bare specifier: the package in the nearest node_modules of the project that has it.
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  if (name === undefined || name === '' || specifier.startsWith('node:')) return [];
  const rest = parts.slice(specifier.startsWith('@') ? 2 : 1).join('/');
  const candidates: string[] = [];
  for (let dir = folder; ; dir = dirname(dir)) {
    const packageDir = join(dir, 'node_modules', name);
    if (rest !== '') candidates.push(...javascriptCandidates(`./${rest}`, packageDir, root));
    else
      candidates.push(
        join(packageDir, 'package.json'),
        ...javascriptExtensions.map((extension) => join(packageDir, `index${extension}`)),
      );
    if (dir === root || dirname(dir) === dir) break;
  }
  return candidates;
}

/**
 * Where a bare specifier (`require('helpers')`) is found in NODE_PATH's folders in the project,
 * which Node tries after every node_modules: `lib/helpers.js`, `lib/helpers/index.js`, a package
 * folder's `package.json`.
 */
function nodePathCandidates(
  specifier: string,
  nodePath: readonly string[],
  root: string,
): string[] {
  if (/^(?:\.{1,2}\/|\/|#|node:)/.test(specifier) || specifier === '') return [];
  return nodePath.flatMap((folder) => [
    ...javascriptCandidates(`./${specifier}`, folder, root),
    join(folder, specifier, 'package.json'),
  ]);
}

/**
 * What a subpath import (`import x from '#lib'`) may load: the nearest package.json up to the
 * project root — its `"imports"` map says where `#lib` leads, so a rewrite of it leads elsewhere —
 * and each file its entry for the specifier names (every condition's; `#lib/*` patterns filled
 * in), as Node would try it.
 */
function subpathImportCandidates(specifier: string, folder: string, root: string): string[] {
  for (let dir = folder; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    const outcome = readRegularFileSync(manifest, { maxBytes: 1024 * 1024 });
    if (outcome.kind === 'read') {
      let imports: unknown;
      try {
        imports = (JSON.parse(Buffer.from(outcome.bytes).toString('utf8')) as { imports?: unknown })
          .imports;
      } catch {
        return [manifest];
      }
      const targets: string[] = [];
      const collect = (value: unknown, rest: string) => {
        if (typeof value === 'string') targets.push(value.replace('*', rest));
        else if (value !== null && typeof value === 'object')
          for (const inner of Object.values(value)) collect(inner, rest);
      };
      if (imports !== null && typeof imports === 'object')
        for (const [key, value] of Object.entries(imports)) {
          const star = key.indexOf('*');
          if (key === specifier) collect(value, '');
          else if (
            star >= 0 &&
            specifier.startsWith(key.slice(0, star)) &&
            specifier.endsWith(key.slice(star + 1))
          )
            collect(value, specifier.slice(star, specifier.length - (key.length - star - 1)));
        }
      return [
        manifest,
        ...targets
          .filter((target) => target.startsWith('./'))
          .flatMap((target) => javascriptCandidates(target, dir, root)),
      ];
    }
    if (dir === root || dirname(dir) === dir) return [];
  }
}

/** The specifiers of `import … from`, `import '…'`, `export … from`, `require()` and `import()`. */
function javascriptSpecifiers(text: string): string[] {
  const specifiers: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\b(?:require|import)\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const pattern of patterns)
    for (const match of text.matchAll(pattern))
      if (match[1] !== undefined) specifiers.push(match[1]);
  return specifiers;
}

/**
 * The files Python may run for the module `name` found in `folder`, whichever its path finder
 * takes: a compiled extension (`name.so`, `name.abi3.so`, `name.cpython-311-x86_64-linux-gnu.so`,
 * before the source; those there now), the source, and sourceless bytecode (`name.pyc`, taken
 * where there is no source — `json.pyc` beside a script comes before the standard library's
 * json). And `folder` itself: one made there later changes its stat (hook-file-pins.ts looks).
 * The `__pycache__` copies are not among them: the CLI gives every Python it starts a cache
 * outside the workspace (python-bytecode.ts).
 */
export function pythonModuleForms(folder: string, name: string): string[] {
  let extensions: string[] = [];
  try {
    extensions = readdirSync(folder)
      .filter((entry) => entry.startsWith(`${name}.`) && entry.endsWith('.so'))
      .map((entry) => join(folder, entry));
  } catch {
    // No folder: nothing there to load.
  }
  return [folder, ...extensions, join(folder, `${name}.py`), join(folder, `${name}.pyc`)];
}

/** The `site-packages` folders of the virtual environment at `venv`, one per `lib/python3.x`. */
export function sitePackagesFolders(venv: string): string[] {
  const lib = join(venv, 'lib');
  let names: string[] = [];
  try {
    names = readdirSync(lib);
  } catch {
    // No lib: no site-packages.
  }
  return names
    .filter((name) => name.startsWith('python'))
    .map((name) => join(lib, name, 'site-packages'));
}

/**
 * The site-packages of the virtual environment a file belongs to — one of its programs
 * (`.venv/bin/black`, whose `from black import main` loads from there) or a module installed in
 * it — or none.
 */
function ownSitePackages(path: string): string[] {
  const installed = /^(.*)[\\/]lib[\\/]python[^\\/]*[\\/]site-packages[\\/]/.exec(path)?.[1];
  const bin = basename(dirname(path)) === 'bin' ? dirname(dirname(path)) : undefined;
  const venv = installed ?? bin;
  return venv !== undefined && existsSync(join(venv, 'pyvenv.cfg'))
    ? sitePackagesFolders(venv)
    : [];
}

/**
 * The files a Python import may run: the module (or package: `__init__`, which comes before a
 * module of the same name) and each package's `__init__` on the way, in each form
 * ({@link pythonModuleForms}).
 */
function pythonCandidates(
  text: string,
  path: string,
  root: string,
  pythonPath: readonly string[],
): string[] {
  const folder = dirname(path);
  const candidates: string[] = [];
  const modulePaths = (bases: readonly string[], dotted: string) => {
    const parts = dotted.split('.').filter((part) => part !== '');
    for (const base of bases) {
      for (let i = 1; i <= parts.length; i++)
        candidates.push(...pythonModuleForms(join(base, ...parts.slice(0, i)), '__init__'));
      const last = parts.at(-1);
      if (last !== undefined)
        candidates.push(...pythonModuleForms(join(base, ...parts.slice(0, -1)), last));
    }
  };
  // The script's folder is on sys.path (and the project root, where `python -m` and hooks run),
  // and PYTHONPATH's folders in the project.
  // And, for a program or module of a venv, its site-packages.
  const bases = [folder, root, ...pythonPath, ...ownSitePackages(path)];
  for (const match of text.matchAll(/^[ \t]*import[ \t]+([\w., \t]+)/gm))
    for (const name of (match[1] ?? '').split(','))
      modulePaths(bases, name.trim().split(/\s+/)[0] ?? '');
  for (const match of text.matchAll(
    /^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+([\w., \t()*]+)/gm,
  )) {
    const dots = (match[1] ?? '').length;
    const module = match[2] ?? '';
    let packageDirs = bases;
    if (dots > 0) {
      let dir = folder;
      for (let i = 1; i < dots; i++) dir = dirname(dir);
      packageDirs = [dir];
    }
    modulePaths(packageDirs, module);
    // `from pkg import name` may import the module pkg/name.py.
    for (const name of (match[3] ?? '').replace(/[()]/g, '').split(',')) {
      const item = name.trim().split(/s+/)[0] ?? '';
      if (item !== '' && item !== '*') modulePaths(packageDirs, `${module}.${item}`);
    }
  }
  return candidates;
}

/**
 * The files a Perl script's `use Foo::Bar;`, `require Foo::Bar;` and `use parent 'Foo'` may load
 * (`Foo/Bar.pm`): in each folder its `use lib` names (literally, or from `$FindBin::Bin`, the
 * script's folder), and the script's folder and the project root with their `lib`. A namespace name
 * is no path, so the words of the text did not reach it.
 */
function perlCandidates(
  text: string,
  folder: string,
  root: string,
  perlPath: readonly string[],
): string[] {
  // PERL5LIB's folders come first in @INC, then `use lib`'s, the script's and the root's.
  const libs = new Set([...perlPath, folder, join(folder, 'lib'), root, join(root, 'lib')]);
  for (const match of text.matchAll(/^[ \t]*use[ \t]+lib\b([^;]*);/gm))
    for (const quoted of (match[1] ?? '').matchAll(/(["'])(.*?)\1|qw\s*\(([^)]*)\)/g))
      for (const entry of (quoted[2] ?? quoted[3] ?? '').split(/\s+/)) {
        if (entry === '') continue;
        const named = entry.replace(/^\$(?:FindBin::)?(?:Bin|RealBin)\b/, folder);
        if (named.includes('$')) continue;
        libs.add(resolve(root, named));
        libs.add(resolve(folder, named));
      }
  const modules = new Set<string>();
  for (const match of text.matchAll(/^[ \t]*(?:use|require)[ \t]+([A-Z][\w]*(?:::\w+)*)/gm))
    if (match[1] !== undefined) modules.add(match[1]);
  for (const match of text.matchAll(/^[ \t]*use[ \t]+(?:parent|base)\b([^;]*);/gm))
    for (const named of (match[1] ?? '').matchAll(/\b([A-Z]\w*(?:::\w+)*)\b/g))
      if (named[1] !== undefined) modules.add(named[1]);
  return [...modules].flatMap((module) =>
    [...libs].map((lib) => `${join(lib, ...module.split('::'))}.pm`),
  );
}

/** The bare words of a package.json's scripts (`"lint": "eslint ."` → `eslint`, `.`…), some programs they run. */
function packageScriptWords(text: string): string[] {
  let scripts: unknown;
  try {
    scripts = (JSON.parse(text) as { scripts?: unknown }).scripts;
  } catch {
    return [];
  }
  if (scripts === null || typeof scripts !== 'object') return [];
  const words = new Set<string>();
  for (const line of Object.values(scripts))
    if (typeof line === 'string')
      for (const word of line.split(/[\s;&|()<>`'"]+/))
        if (/^[\w][\w.-]*$/.test(word) && words.size < maxWordsPerFile) words.add(word);
  return [...words];
}

/**
 * The project's own programs a package.json's scripts run by name: npm puts `node_modules/.bin`
 * first on their PATH, so `"lint": "eslint ."` runs `node_modules/.bin/eslint` (each bare word
 * of a script is tried; those that are not there are skipped).
 */
function packageScriptBins(text: string, folder: string): string[] {
  return packageScriptWords(text).map((word) => join(folder, 'node_modules', '.bin', word));
}

/**
 * The words of a shell script, a Makefile or a package.json's scripts that may be programs it
 * runs by name (`ruff`, `black`): PATH finds them, in a folder of the workspace too (an activated
 * `.venv/bin`; npm runs a script with `node_modules/.bin` before the rest of PATH). Nothing for
 * another kind of file (a JavaScript file's words are not commands).
 */
export function programWords(path: string, bytes: Uint8Array): string[] {
  const name = basename(path);
  if (name === 'package.json')
    return packageScriptWords(Buffer.from(bytes.subarray(0, maxScannedChars)).toString('utf8'));
  const head = Buffer.from(bytes.subarray(0, 256)).toString('utf8');
  const shell =
    /\.(?:sh|bash|zsh|mk)$/.test(name) ||
    ['Makefile', 'makefile', 'GNUmakefile', 'justfile', 'Justfile'].includes(name) ||
    /^#!.*\b(?:sh|bash|zsh|dash|ksh)\b/.test(head);
  if (!shell || bytes.subarray(0, 8192).includes(0)) return [];
  const text = Buffer.from(bytes.subarray(0, maxScannedChars)).toString('utf8');
  const found = new Set<string>();
  for (const word of text.replace(/^[ \t]*#(?!!).*$/gm, '').split(/[\s'"`()[\]{},;<>|&=$@]+/)) {
    if (found.size >= maxWordsPerFile) break;
    if (/^[A-Za-z_][\w.+-]*$/.test(word)) found.add(word);
  }
  return [...found];
}

/**
 * The paths (absolute, or relative to be tried against the project root and then the file's
 * folder) that the project file `path` (absolute) may load, found in its text. Nothing for a
 * binary file.
 */
export function scriptReferences(
  path: string,
  bytes: Uint8Array,
  root: string,
  pythonPath: readonly string[] = [],
  nodePath: readonly string[] = [],
  perlPath: readonly string[] = [],
  rubyPath: readonly string[] = [],
): string[] {
  const head = bytes.subarray(0, 8192);
  if (head.includes(0)) return [];
  const text = Buffer.from(bytes.subarray(0, maxScannedChars)).toString('utf8');
  const folder = dirname(path);
  const references = pathWords(text, folder).flatMap((word) =>
    isAbsolute(word) ? [word] : [resolve(root, word), resolve(folder, word)],
  );
  if (basename(path) === 'package.json') references.push(...packageScriptBins(text, folder));
  switch (languageOf(path, text)) {
    case 'javascript':
      for (const specifier of javascriptSpecifiers(text))
        references.push(
          ...javascriptCandidates(specifier, folder, root),
          ...nodePathCandidates(specifier, nodePath, root),
        );
      break;
    case 'python':
      references.push(...pythonCandidates(text, path, root, pythonPath));
      break;
    case 'perl':
      references.push(...perlCandidates(text, folder, root, perlPath));
      break;
    case 'ruby':
      references.push(...rubyCandidates(text, path, root, rubyPath));
      break;
    default:
      break;
  }
  return references;
}
