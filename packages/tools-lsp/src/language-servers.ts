import { constants } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { LspError } from './errors.js';

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
  /** How diagnostics are collected: pushed by the server, or asked of tsserver directly. */
  diagnostics?: 'push' | 'tsserver';
}

/** What a config's `initializationOptions` sees. */
export interface ServerStartContext {
  /** Absolute path of the server executable found. */
  executable: string;
  /** The workspace's first root (absolute). */
  root: string;
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
 * `node_modules/typescript` above the root), else the one installed beside the server.
 */
export async function findTsserver(context: ServerStartContext): Promise<string | undefined> {
  const candidates: string[] = [];
  for (let directory = context.root; ; directory = path.dirname(directory)) {
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

/** typescript-language-server (TypeScript and JavaScript). */
export const typescriptServer: LanguageServerConfig = {
  language: 'typescript',
  command: 'typescript-language-server',
  args: ['--stdio'],
  extensions: typescriptExtensions,
  languageIdOf: typescriptLanguageId,
  installHint:
    'install it with `npm install --save-dev typescript-language-server typescript` (or `npm install -g typescript-language-server typescript`)',
  initializationOptions: async (context) => {
    const tsserver = await findTsserver(context);
    return {
      hostInfo: '@agent/tools-lsp',
      // The syntax-only server would answer while the project loads, with guesses (a definition
      // landing on the import line); one semantic tsserver answers right, once loaded.
      tsserver: { useSyntaxServer: 'never', ...(tsserver === undefined ? {} : { path: tsserver }) },
    };
  },
  diagnostics: 'tsserver',
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
  diagnostics: 'push',
};

/** The built-in server configurations. */
export const defaultLanguageServers: readonly LanguageServerConfig[] = [
  typescriptServer,
  pythonServer,
];

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
}

/**
 * Where `config.command` lives: itself when absolute; else the first executable of that name in
 * `<root>/node_modules/.bin` and each ancestor's, then `binPaths`, then PATH. Undefined when
 * none exists.
 */
export async function findServerExecutable(
  config: Pick<LanguageServerConfig, 'command'>,
  options: FindServerOptions,
): Promise<string | undefined> {
  if (path.isAbsolute(config.command))
    return (await isExecutable(config.command)) ? config.command : undefined;
  const directories: string[] = [];
  for (let directory = path.resolve(options.root); ; directory = path.dirname(directory)) {
    directories.push(path.join(directory, 'node_modules', '.bin'));
    if (path.dirname(directory) === directory) break;
  }
  directories.push(...(options.binPaths ?? []));
  const pathVariable = 'pathVariable' in options ? options.pathVariable : process.env.PATH;
  for (const entry of (pathVariable ?? '').split(path.delimiter))
    if (entry !== '') directories.push(entry);
  for (const directory of directories) {
    const candidate = path.join(directory, config.command);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** The `server-not-found` error for a language: names the command and how to install it. */
export function serverNotFound(config: LanguageServerConfig, root: string): LspError {
  return new LspError(
    `No ${config.language} language server found: \`${config.command}\` is not in ${path.join(root, 'node_modules', '.bin')} (or a parent's), nor on PATH; ${config.installHint}.`,
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
