import { constants } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { LspError } from './errors.js';
import { readRegularFile } from './paths.js';

/** Languages with a built-in server configuration; others can be added with `servers`. */
export type KnownLanguage = 'typescript' | 'python';

/** How to start and talk to one language server. */
export interface LanguageServerConfig {
  /** Language id used in results and options (`typescript` covers JavaScript too). */
  language: KnownLanguage | (string & {});
  /** Executable name looked up in node_modules/.bin and PATH, or an absolute path. */
  command: string;
  /** Arguments; `--stdio` for both built-in servers. */
  args: readonly string[];
  /** File extensions (with the dot, lower case) this server handles. */
  extensions: readonly string[];
  /** The LSP `languageId` of a file (by extension). */
  languageIdOf: (file: string) => string;
  /** One line telling the user how to install the server, shown when it is missing. */
  installHint: string;
  /** How messages name the executable [`\`command\``]. */
  label?: string;
  /**
   * Names of project files (`tsconfig.json`): a server that answers workspace queries only for the
   * projects of its open files gets one file of each project opened first [none: one file].
   */
  projectFiles?: readonly string[];
  /**
   * `initializationOptions` for the `initialize` request; may depend on where the server binary
   * was found (typescript-language-server is told which `tsserver.js` to use).
   */
  initializationOptions?: (context: ServerStartContext) => Promise<unknown> | unknown;
  /**
   * Answers to `workspace/configuration` by section (`python.analysis`, …), null for others. When
   * unset the client does not announce `workspace.configuration` and the server uses its defaults
   * (and its own config files: tsconfig.json, pyrightconfig.json).
   */
  settings?: Readonly<Record<string, unknown>>;
  /**
   * typescript-language-server: diagnostics and workspace symbols are asked of tsserver directly
   * (its `typescript.tsserverRequest` command). Otherwise diagnostics are pulled
   * (`textDocument/diagnostic`) when the server offers it, else waited for as pushed.
   */
  tsserverPassthrough?: boolean;
  /**
   * Whether an executable found under `command`'s name is this server; when false the search
   * goes on (a `tsc` that is TypeScript 5 has no language server) [any is].
   */
  accepts?: (executable: string) => Promise<boolean>;
}

/** What a config's `initializationOptions` sees. */
export interface ServerStartContext {
  /** Absolute path of the server executable found. */
  executable: string;
  /** The workspace's first root (absolute). */
  root: string;
  /**
   * Whether programs the workspace holds (its `node_modules/typescript`) may run [true]: false in
   * a folder the user has not trusted.
   */
  workspaceExecutables?: boolean;
}

const typescriptExtensions = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];

function typescriptLanguageId(file: string): string {
  const extension = path.extname(file).toLowerCase();
  if (extension === '.tsx') return 'typescriptreact';
  if (extension === '.jsx') return 'javascriptreact';
  if (extension === '.js' || extension === '.mjs' || extension === '.cjs') return 'javascript';
  return 'typescript';
}

/**
 * `tsserver.js` for typescript-language-server: the workspace's own TypeScript (nearest
 * `node_modules/typescript` above the root), else the one installed beside the server; with
 * `workspaceExecutables: false` only the one beside the server.
 */
export async function findTsserver(context: ServerStartContext): Promise<string | undefined> {
  const candidates: string[] = [];
  for (let directory = context.root; ; directory = path.dirname(directory)) {
    if (context.workspaceExecutables === false) break;
    candidates.push(path.join(directory, 'node_modules', 'typescript', 'lib', 'tsserver.js'));
    if (path.dirname(directory) === directory) break;
  }
  const binDirectory = path.dirname(context.executable);
  if (path.basename(binDirectory) === '.bin')
    candidates.push(path.join(path.dirname(binDirectory), 'typescript', 'lib', 'tsserver.js'));
  try {
    // npm links .bin entries to the package's file: …/node_modules/<server>/lib/cli.mjs.
    const real = await fs.realpath(context.executable);
    const marker = `${path.sep}node_modules${path.sep}`;
    const at = real.lastIndexOf(marker);
    if (at !== -1)
      candidates.push(
        path.join(real.slice(0, at + marker.length), 'typescript', 'lib', 'tsserver.js'),
      );
  } catch {
    // Not resolvable: the other candidates stand.
  }
  for (const candidate of candidates) if (await isFile(candidate)) return candidate;
  return undefined;
}

const typescriptInstallHint =
  'install it with `npm install --save-dev typescript` (TypeScript 7 and later has its own server) or `npm install --save-dev typescript-language-server typescript@5`';

/**
 * The major version of the TypeScript package a `tsc` executable belongs to: `<node_modules>/
 * typescript/package.json` beside a `.bin` entry, or above the executable's real path.
 */
export async function typescriptMajorVersion(executable: string): Promise<number | undefined> {
  const candidates: string[] = [];
  const binDirectory = path.dirname(executable);
  // pnpm's .bin entries are shell scripts naming the package's file: "$basedir/../<package>/bin/tsc".
  const script = await fileHead(executable, 1024);
  const target = script.startsWith('#!')
    ? /"\$basedir\/([^"]+?)\/bin\/[^"/]+"/.exec(script)?.[1]
    : undefined;
  if (target !== undefined) candidates.push(path.join(binDirectory, target, 'package.json'));
  if (path.basename(binDirectory) === '.bin')
    candidates.push(path.join(path.dirname(binDirectory), 'typescript', 'package.json'));
  try {
    const real = await fs.realpath(executable);
    for (
      let directory = path.dirname(real);
      path.dirname(directory) !== directory;
      directory = path.dirname(directory)
    )
      candidates.push(path.join(directory, 'package.json'));
  } catch {
    // Unresolvable: the .bin candidate stands.
  }
  for (const candidate of candidates) {
    // A manifest is a few kB; one over 1 MiB is not TypeScript's.
    const text = await readRegularFile(candidate, 1024 * 1024 + 1);
    if (text === undefined || text.length > 1024 * 1024) continue;
    try {
      const manifest = JSON.parse(text) as {
        name?: unknown;
        version?: unknown;
      };
      if (manifest.name === 'typescript' && typeof manifest.version === 'string')
        return Number.parseInt(manifest.version, 10);
    } catch {
      // Not there, or not JSON: the next candidate.
    }
  }
  return undefined;
}

/**
 * TypeScript 7's own language server (`tsc --lsp --stdio`, the native port), used where the
 * TypeScript found is 7 or later; it pulls diagnostics.
 */
export const typescriptNativeServer: LanguageServerConfig = {
  language: 'typescript',
  command: 'tsc',
  label: '`tsc` of TypeScript 7 or later',
  projectFiles: ['tsconfig.json', 'jsconfig.json'],
  args: ['--lsp', '--stdio'],
  extensions: typescriptExtensions,
  languageIdOf: typescriptLanguageId,
  installHint: typescriptInstallHint,
  accepts: async (executable) => ((await typescriptMajorVersion(executable)) ?? 0) >= 7,
};

/** typescript-language-server (TypeScript and JavaScript, through TypeScript 5's tsserver). */
export const typescriptServer: LanguageServerConfig = {
  language: 'typescript',
  command: 'typescript-language-server',
  projectFiles: ['tsconfig.json', 'jsconfig.json'],
  args: ['--stdio'],
  extensions: typescriptExtensions,
  languageIdOf: typescriptLanguageId,
  installHint: typescriptInstallHint,
  initializationOptions: async (context) => {
    const tsserver = await findTsserver(context);
    // Told no path, the server takes the workspace's own TypeScript: not in a folder not trusted.
    if (tsserver === undefined && context.workspaceExecutables === false)
      throw new LspError(
        `typescript-language-server (${context.executable}) has no TypeScript installed beside it, and the workspace's own is not run in a folder you have not trusted`,
        { code: 'server-not-found' },
      );
    return {
      hostInfo: '@agent/tools-lsp',
      // The syntax-only server would answer while the project loads, with guesses (a definition
      // landing on the import line); one semantic tsserver answers right, once loaded.
      tsserver: { useSyntaxServer: 'never', ...(tsserver === undefined ? {} : { path: tsserver }) },
    };
  },
  tsserverPassthrough: true,
};

/** pyright's language server (`pyright-langserver`, from the `pyright` npm package). */
export const pythonServer: LanguageServerConfig = {
  language: 'python',
  command: 'pyright-langserver',
  args: ['--stdio'],
  extensions: ['.py', '.pyi'],
  languageIdOf: () => 'python',
  installHint:
    'install it with `npm install --save-dev pyright` (or `npm install -g pyright`, or `pip install pyright`)',
};

/**
 * The built-in server configurations, in the order tried for a language: TypeScript 7's own
 * server where TypeScript 7 is installed, else typescript-language-server; pyright for Python.
 */
export const defaultLanguageServers: readonly LanguageServerConfig[] = [
  typescriptNativeServer,
  typescriptServer,
  pythonServer,
];

/** The first `bytes` of a file as text ('' when unreadable): enough to read a shell shim. */
async function fileHead(file: string, bytes: number): Promise<string> {
  return (await readRegularFile(file, bytes)) ?? '';
}

async function isFile(candidate: string): Promise<boolean> {
  try {
    return (await fs.stat(candidate)).isFile();
  } catch {
    return false;
  }
}

async function isExecutable(candidate: string): Promise<boolean> {
  try {
    await fs.access(candidate, constants.X_OK);
    return await isFile(candidate);
  } catch {
    return false;
  }
}

/** Options of {@link findServerExecutable}. */
export interface FindServerOptions {
  /** Directory whose `node_modules/.bin` (and its ancestors') are searched first. */
  root: string;
  /** Extra directories searched after node_modules/.bin and before PATH. */
  binPaths?: readonly string[];
  /** PATH to search [process.env.PATH]. */
  pathVariable?: string | undefined;
  /**
   * Whether executables the workspace holds may be found [true]. False (a folder the user has not
   * trusted): no `node_modules/.bin`, and no directory of `binPaths` or PATH that is relative (it
   * names a folder of the workspace: `.`, `node_modules/.bin`) or lies inside `root`.
   */
  workspaceExecutables?: boolean;
}

/**
 * Where `config.command` lives: itself when absolute; else the first executable of that name in
 * `<root>/node_modules/.bin` and each ancestor's, then `binPaths`, then PATH. Undefined when
 * none exists.
 */
export async function findServerExecutable(
  config: Pick<LanguageServerConfig, 'command' | 'accepts'>,
  options: FindServerOptions,
): Promise<string | undefined> {
  const usable = async (candidate: string) =>
    (await isExecutable(candidate)) &&
    (config.accepts === undefined || (await config.accepts(candidate)));
  if (path.isAbsolute(config.command))
    return (await usable(config.command)) ? config.command : undefined;
  const root = path.resolve(options.root);
  const ownExecutables = options.workspaceExecutables !== false;
  const directories: string[] = [];
  // node_modules/.bin of the folders above the root, which must be the user's (see foreignFolder).
  const above = new Set<string>();
  for (let directory = root; ownExecutables; directory = path.dirname(directory)) {
    const bin = path.join(directory, 'node_modules', '.bin');
    directories.push(bin);
    if (directory !== root) above.add(bin);
    if (path.dirname(directory) === directory) break;
  }
  directories.push(...(options.binPaths ?? []));
  const pathVariable = 'pathVariable' in options ? options.pathVariable : process.env.PATH;
  for (const entry of (pathVariable ?? '').split(path.delimiter))
    if (entry !== '') directories.push(entry);
  for (const directory of directories) {
    if (!ownExecutables && !outsideWorkspace(directory, root)) continue;
    const candidate = path.join(directory, config.command);
    if (!(await usable(candidate))) continue;
    if (above.has(directory) && (await foreignFolder(candidate))) continue;
    return candidate;
  }
  return undefined;
}

/**
 * Whether `executable` (in a `node_modules/.bin` above the workspace) or a folder on its way up
 * to the `node_modules` belongs to another user (not this one, not root): in a shared folder,
 * another user's `/tmp/node_modules/.bin/typescript-language-server` ran as the server of every
 * workspace below /tmp.
 */
async function foreignFolder(executable: string): Promise<boolean> {
  const uid = process.getuid?.();
  if (uid === undefined) return false;
  const bin = path.dirname(executable);
  for (const entry of [executable, bin, path.dirname(bin), path.dirname(path.dirname(bin))]) {
    const owner = (await fs.lstat(entry).catch(() => undefined))?.uid;
    if (owner !== undefined && owner !== uid && owner !== 0) return true;
  }
  return false;
}

/**
 * `pathVariable` with only the directories outside the workspace `root` (absolute ones): what a
 * server of a folder not trusted may run by name (pyright runs `python`).
 */
export function pathOutsideWorkspace(pathVariable: string, root: string): string {
  return pathVariable
    .split(path.delimiter)
    .filter((entry) => entry !== '' && outsideWorkspace(entry, root))
    .join(path.delimiter);
}

/** Whether `directory` is absolute and outside `root` (a relative one is resolved in the workspace). */
function outsideWorkspace(directory: string, root: string): boolean {
  if (!path.isAbsolute(directory)) return false;
  const rest = path.relative(root, path.resolve(directory));
  return rest === '..' || rest.startsWith(`..${path.sep}`) || path.isAbsolute(rest);
}

/**
 * The `server-not-found` error for a language: names the executables looked for (`configs`, the
 * language's in order) and how to install one.
 */
export function serverNotFound(configs: readonly LanguageServerConfig[], root: string): LspError {
  const [first] = configs;
  if (first === undefined) throw new Error('unreachable: no configs');
  const names = configs.map((config) => config.label ?? `\`${config.command}\``).join(' nor ');
  return new LspError(
    `No ${first.language} language server found: ${configs.length > 1 ? 'neither ' : ''}${names} is in ${path.join(root, 'node_modules', '.bin')} (or a parent's), nor on PATH; ${first.installHint}.`,
    { code: 'server-not-found' },
  );
}

/** The config whose extensions include `file`'s, if any. */
export function serverConfigFor(
  configs: readonly LanguageServerConfig[],
  file: string,
): LanguageServerConfig | undefined {
  const extension = path.extname(file).toLowerCase();
  return configs.find((config) => config.extensions.includes(extension));
}
