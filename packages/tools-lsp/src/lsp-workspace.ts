import { realpathSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { PermissionSubjectsResult } from '@agent/core';
import type {
  DocumentSymbol,
  Hover,
  Location,
  LocationLink,
  Position,
  SymbolInformation,
  WorkspaceEdit,
  WorkspaceSymbol,
} from 'vscode-languageserver-protocol';
import { LspError } from './errors.js';
import {
  defaultLanguageServers,
  type LanguageServerConfig,
  serverConfigFor,
} from './language-servers.js';
import { LanguageSessions, type Session, type WatchedFileEvent } from './language-sessions.js';
import { isPathInside, realPathOf, uriOf } from './paths.js';
import {
  type DiagnosticsTiming,
  diagnosticsOf,
  type FileDiagnostics,
} from './pushed-diagnostics.js';
import { type RenamePreview, RenamePreviews } from './rename-previews.js';
import type { CommandWrapper, ServerProcess } from './server-process.js';
import { findNamedFiles, findSourceFiles } from './source-files.js';
import { tsserverWorkspaceSymbols } from './tsserver-passthrough.js';

export type { FileDiagnostics } from './pushed-diagnostics.js';
export type { RenamePreview } from './rename-previews.js';

/** Options of {@link LspWorkspace}. */
export interface LspWorkspaceOptions {
  /** The workspace directory; relative paths are resolved against it. */
  cwd: string;
  /** Directories the tools may touch [`[cwd]`], compared by real path; all are workspace folders. */
  roots?: readonly string[];
  /** Language servers [typescript-language-server, pyright]; replaces the defaults. */
  servers?: readonly LanguageServerConfig[];
  /** Directories searched for server executables after `node_modules/.bin` and before PATH. */
  binPaths?: readonly string[];
  /**
   * Environment of the servers [process.env], without the variables that hold credentials
   * (`credentialFreeEnvironment` of `@agent/core`) unless `passEnv` names them.
   */
  env?: NodeJS.ProcessEnv;
  /** Names of credential variables the servers get anyway (exact names) [none]. */
  passEnv?: readonly string[];
  /**
   * Runs each server through this wrapper, e.g. an `@agent/sandbox` `Sandbox` (writes only in the
   * workspace, no network) [none: servers run with the user's rights].
   */
  sandbox?: CommandWrapper;
  /** How long diagnostics must stay unchanged before pushed ones count as final, in ms [300]. */
  diagnosticsSettleMs?: number;
  /** Longest wait for pushed diagnostics, in ms; then what has arrived is returned [60000]. */
  diagnosticsTimeoutMs?: number;
  /** Wait between `shutdown`, SIGTERM and SIGKILL when closing, in ms [2000]. */
  shutdownGraceMs?: number;
  /**
   * Whether programs the workspace holds may run as its servers [true]: its `node_modules/.bin`
   * servers, its TypeScript, a relative PATH entry (`.`, `node_modules/.bin`) or one inside the
   * workspace. False for a folder the user has not trusted: a cloned repository's
   * `node_modules/.bin/typescript-language-server` is its own code, run unasked by a read-only
   * tool. Servers are then found only outside the workspace, and PATH in their environment keeps
   * only such directories.
   */
  workspaceExecutables?: boolean;
  /**
   * Why writing `real` (a real path inside one of `roots`) would plant something the user's own
   * programs run later, outside any sandbox — an editor's task in `.vscode`, a git hook in the
   * tree, a startup file of the home — or undefined. A rename's edit is the language server's
   * (the repository's own, run sandboxed, where such places are read-only), written by this
   * process: {@link LspWorkspace.writeSubjects} then asks for the `full-access` tier, as the file
   * tools do (`protectedWriteReason` of `@agent/tools-builtin`) [none: only git directories,
   * which are refused outright].
   */
  protectedWrite?: (real: string, roots: readonly string[]) => Promise<string | undefined>;
}

/** A file change the app reports (a file written by another tool). */
export type FileChangeNotice = string | { path: string; type: 'created' | 'changed' | 'deleted' };

/** Projects (tsconfig.json…) asked for workspace symbols at most. */
const maxProjects = 40;

/**
 * Language servers for one workspace: one per language, started on first use, started again when
 * it died, stopped by {@link close}. Documents are opened as they are queried and kept in step
 * with the disk (see {@link OpenDocuments}); {@link notifyFilesChanged} tells the servers about
 * other files. Positions are LSP's (0-based line, UTF-16 character).
 */
export class LspWorkspace implements AsyncDisposable {
  /** The workspace directory (absolute). */
  readonly cwd: string;
  /** The configured roots (absolute). */
  readonly roots: readonly string[];
  /** The language server configurations in use. */
  readonly servers: readonly LanguageServerConfig[];
  readonly #options: LspWorkspaceOptions;
  readonly #sessions: LanguageSessions;
  readonly #previews = new RenamePreviews();
  #realRoots: Promise<string[]> | undefined;
  #displayBases: string[] | undefined;

  constructor(options: LspWorkspaceOptions) {
    this.#options = options;
    this.cwd = path.resolve(options.cwd);
    this.roots = (options.roots ?? [this.cwd]).map((root) => path.resolve(this.cwd, root));
    this.servers = options.servers ?? defaultLanguageServers;
    this.#sessions = new LanguageSessions({
      options,
      servers: this.servers,
      cwd: this.cwd,
      realRoots: () => this.realRoots(),
    });
  }

  /** Real paths of the roots. */
  realRoots(): Promise<string[]> {
    this.#realRoots ??= Promise.all(this.roots.map((root) => realPathOf(root)));
    return this.#realRoots;
  }

  /** The real path of `input` (relative to cwd) when it lies inside a root; undefined otherwise. */
  async confine(input: string): Promise<string | undefined> {
    const real = await realPathOf(path.resolve(this.cwd, input));
    const roots = await this.realRoots();
    return roots.some((root) => isPathInside(root, real)) ? real : undefined;
  }

  /**
   * `file` (a real path, as the servers report) relative to the workspace directory when inside
   * it (or to the root it is in), else absolute.
   */
  display(file: string): string {
    this.#displayBases ??= [this.cwd, ...this.roots].map((base) => {
      try {
        return realpathSync(base);
      } catch {
        return base;
      }
    });
    for (const base of this.#displayBases) {
      if (isPathInside(base, file)) return path.relative(base, file) || '.';
    }
    return file;
  }

  /** The server configuration for `file`, by extension. */
  configFor(file: string): LanguageServerConfig | undefined {
    return serverConfigFor(this.servers, file);
  }

  /** Which languages have a server installed, which server (its command) and where. */
  async installedServers(): Promise<{ language: string; command: string; executable: string }[]> {
    const found: { language: string; command: string; executable: string }[] = [];
    for (const language of this.#sessions.languages()) {
      const picked = await this.#sessions.pick(language);
      if (picked !== undefined)
        found.push({ language, command: picked.config.command, executable: picked.executable });
    }
    return found;
  }

  /** The servers running now (language and process id). */
  runningServers(): Promise<{ language: string; pid: number }[]> {
    return this.#sessions.runningServers();
  }

  /** True when the server for `file`'s language is running (a call will not wait for a start). */
  isServerRunning(file: string): boolean {
    const config = this.configFor(file);
    return config !== undefined && this.#sessions.running(config.language)?.server.alive === true;
  }

  /** Where a symbol is defined (links become their target's selection range). */
  async definition(file: string, position: Position, signal?: AbortSignal): Promise<Location[]> {
    return this.#withDocument(file, signal, async ({ server }, uri) => {
      const result = await server.request<Location | Location[] | LocationLink[] | null>(
        'textDocument/definition',
        { textDocument: { uri }, position },
        signal,
      );
      return locationsOf(result);
    });
  }

  /** Every reference to a symbol, its declaration included unless told otherwise. */
  async references(
    file: string,
    position: Position,
    options: { includeDeclaration?: boolean; signal?: AbortSignal } = {},
  ): Promise<Location[]> {
    return this.#withDocument(file, options.signal, async ({ server }, uri) => {
      const result = await server.request<Location[] | null>(
        'textDocument/references',
        {
          textDocument: { uri },
          position,
          context: { includeDeclaration: options.includeDeclaration ?? true },
        },
        options.signal,
      );
      return result ?? [];
    });
  }

  /** The hover (type, signature, docs) at a position, or null. */
  async hover(file: string, position: Position, signal?: AbortSignal): Promise<Hover | null> {
    return this.#withDocument(file, signal, ({ server }, uri) =>
      server.request<Hover | null>(
        'textDocument/hover',
        { textDocument: { uri }, position },
        signal,
      ),
    );
  }

  /** The symbols declared in a file (a tree when the server gives one). */
  async documentSymbols(
    file: string,
    signal?: AbortSignal,
  ): Promise<DocumentSymbol[] | SymbolInformation[]> {
    return this.#withDocument(file, signal, async ({ server }, uri) => {
      const result = await server.request<DocumentSymbol[] | SymbolInformation[] | null>(
        'textDocument/documentSymbol',
        { textDocument: { uri } },
        signal,
      );
      return result ?? [];
    });
  }

  /**
   * Symbols matching `query` across the workspace, from the server of `language`, or from every
   * installed server whose language has files in the workspace.
   */
  async workspaceSymbols(
    query: string,
    options: {
      language?: string;
      signal?: AbortSignal;
      /** Told when projects must be loaded first (the first search in a monorepo takes seconds). */
      onProgress?: (text: string) => void;
    } = {},
  ): Promise<(SymbolInformation | WorkspaceSymbol)[]> {
    const configs = await this.#languagesToAsk(options.language);
    const results: (SymbolInformation | WorkspaceSymbol)[] = [];
    const seen = new Set<string>();
    for (const { config, sample } of configs) {
      // Servers answer from the projects they have loaded: open a file of each project (a
      // monorepo has many) first.
      const samples = await this.#projectSamples(config, sample);
      const running = this.#sessions.running(config.language);
      const unopened = samples.filter((file) => running?.documents.has(file) !== true).length;
      if (unopened > 1)
        options.onProgress?.(`Loading ${unopened} ${config.language} projects for the search…`);
      const symbols = await this.#sessions.withDocuments(
        config,
        samples,
        options.signal,
        ({ server }) =>
          server.config.tsserverPassthrough === true
            ? tsserverWorkspaceSymbols(server, query, options.signal).catch((error: unknown) => {
                if (LspError.isInstance(error) && error.code === 'request-failed')
                  return this.#askWorkspaceSymbols(server, query, options.signal);
                throw error;
              })
            : this.#askWorkspaceSymbols(server, query, options.signal),
      );
      for (const symbol of symbols) {
        const range = 'range' in symbol.location ? symbol.location.range.start : undefined;
        const key = `${symbol.location.uri}:${range?.line}:${range?.character}:${symbol.name}`;
        if (seen.has(key)) continue;
        seen.add(key);
        results.push(symbol);
      }
    }
    return results;
  }

  async #askWorkspaceSymbols(
    server: ServerProcess,
    query: string,
    signal: AbortSignal | undefined,
  ): Promise<(SymbolInformation | WorkspaceSymbol)[]> {
    return (
      (await server.request<(SymbolInformation | WorkspaceSymbol)[] | null>(
        'workspace/symbol',
        { query },
        signal,
      )) ?? []
    );
  }

  /**
   * One source file per project of `config`'s project files (at most {@link maxProjects}): its
   * `src/` first, else the first found under it; just `fallback` without project files.
   */
  async #projectSamples(config: LanguageServerConfig, fallback: string): Promise<string[]> {
    if (config.projectFiles === undefined) return [fallback];
    const roots = await this.realRoots();
    const projects = await findNamedFiles(roots, config.projectFiles, maxProjects);
    const samples: string[] = [];
    for (const project of projects.files) {
      const directory = path.dirname(project);
      const found =
        (await findSourceFiles([path.join(directory, 'src')], config.extensions, 1)).files[0] ??
        (await findSourceFiles([directory], config.extensions, 1)).files[0];
      if (found !== undefined && !samples.includes(found)) samples.push(found);
    }
    return samples.length === 0 ? [fallback] : samples;
  }

  /** Diagnostics of one file, as the server reports them once it has checked the file's current text. */
  async diagnostics(file: string, signal?: AbortSignal): Promise<FileDiagnostics> {
    return this.#withDocument(file, signal, (session, uri, version) =>
      diagnosticsOf(session.server, { file, uri, version }, this.#diagnosticsTiming(), signal),
    );
  }

  /**
   * Diagnostics of up to `maxFiles` source files of the workspace (every installed language, or
   * `language`), each file opened and checked. `truncated` says files were left out.
   */
  async workspaceDiagnostics(
    options: { language?: string; maxFiles?: number; signal?: AbortSignal } = {},
  ): Promise<{ files: FileDiagnostics[]; truncated: boolean }> {
    const maxFiles = options.maxFiles ?? 200;
    const configs = await this.#languagesToAsk(options.language);
    const files: FileDiagnostics[] = [];
    let truncated = false;
    for (const { config } of configs) {
      const found = await findSourceFiles(
        await this.realRoots(),
        config.extensions,
        maxFiles - files.length,
      );
      truncated ||= found.truncated;
      if (found.files.length === 0) continue;
      // All opened first (one refresh of the open documents), so the server checks them together.
      const timing = this.#diagnosticsTiming();
      const checked = await this.#sessions.withDocuments(
        config,
        found.files,
        options.signal,
        (session, documents) =>
          Promise.all(
            documents.map((document) =>
              diagnosticsOf(session.server, document, timing, options.signal),
            ),
          ),
      );
      files.push(...checked);
      if (files.length >= maxFiles) break;
    }
    return { files, truncated };
  }

  /**
   * Computes a rename without writing anything: the server's edit as a unified diff, kept under
   * an id for {@link applyEdit}. Throws `LspError` when the server says the position cannot be
   * renamed, and when the edit would touch files outside the roots.
   */
  async previewRename(
    file: string,
    position: Position,
    newName: string,
    signal?: AbortSignal,
  ): Promise<RenamePreview> {
    const edit = await this.#withDocument(file, signal, async ({ server }, uri) => {
      const provider = server.capabilities.renameProvider;
      if (typeof provider === 'object' && provider.prepareProvider === true) {
        const prepared = await server.request<unknown>(
          'textDocument/prepareRename',
          { textDocument: { uri }, position },
          signal,
        );
        if (prepared === null)
          throw new LspError(
            'The language server says the symbol at this position cannot be renamed.',
            {
              code: 'request-failed',
            },
          );
      }
      return server.request<WorkspaceEdit | null>(
        'textDocument/rename',
        { textDocument: { uri }, position, newName },
        signal,
      );
    });
    return this.#previews.add(edit, await this.realRoots(), (target) => this.display(target));
  }

  /** The files a stored preview would write (absolute), or undefined when the id is unknown. */
  previewFiles(id: string): string[] | undefined {
    return this.#previews.files(id);
  }

  /**
   * The permission subjects of writing a stored preview: its files (real paths), with the
   * `full-access` tier when one is a protected place (`protectedWrite`); none for an unknown id.
   */
  async writeSubjects(id: string): Promise<PermissionSubjectsResult> {
    const files = this.#previews.files(id) ?? [];
    const judge = this.#options.protectedWrite;
    if (judge === undefined) return files;
    const roots = await this.realRoots();
    for (const file of files)
      if ((await judge(file, roots)) !== undefined) return { subjects: files, tier: 'full-access' };
    return files;
  }

  /**
   * Writes a previewed edit. Refuses (`LspError`, nothing written) when any of its files changed
   * since the preview; each file is replaced atomically and the servers are told.
   */
  async applyEdit(id: string): Promise<{ files: string[] }> {
    const files = await this.#previews.apply(
      id,
      (target) => this.display(target),
      await this.realRoots(),
    );
    await this.notifyFilesChanged(files);
    return { files };
  }

  /**
   * Finds the source files that changed on disk since the last scan (created, changed, deleted:
   * by mtime and size, at most {@link maxScannedFiles} per language; the first scan is taken
   * when a server starts) and reports them to the running servers. For an app to call after a
   * tool that may have changed files it cannot name (a shell command). Returns how many changed.
   */
  syncWorkspaceFiles(): Promise<number> {
    return this.#sessions.syncWorkspaceFiles();
  }

  /**
   * Tells the running servers that files changed on disk (written by another tool): open ones are
   * sent again, others reported as `workspace/didChangeWatchedFiles`. A bare path counts as
   * changed when it exists and deleted when not.
   */
  async notifyFilesChanged(changes: readonly FileChangeNotice[]): Promise<void> {
    const events: WatchedFileEvent[] = [];
    for (const change of changes) {
      const file = path.resolve(this.cwd, typeof change === 'string' ? change : change.path);
      const real = await realPathOf(file);
      let type: 'created' | 'changed' | 'deleted';
      if (typeof change === 'string') {
        type = await fs.stat(real).then(
          () => 'changed' as const,
          () => 'deleted' as const,
        );
      } else type = change.type;
      events.push({ uri: uriOf(real), type: type === 'created' ? 1 : type === 'changed' ? 2 : 3 });
    }
    await this.#sessions.notifyWatchedFiles(events);
  }

  /** Stops every server (shutdown, exit, then its process group killed); further calls fail. */
  close(): Promise<void> {
    return this.#sessions.close();
  }

  /** {@link close}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * Runs `action` with `file` open and up to date in its language's server. When the server dies
   * during the action, it is started again and the action retried once (queries are idempotent).
   */
  async #withDocument<T>(
    file: string,
    signal: AbortSignal | undefined,
    action: (session: Session, uri: string, version: number) => Promise<T> | T,
  ): Promise<T> {
    const config = this.configFor(file);
    if (config === undefined)
      throw new LspError(
        `No language server handles ${path.extname(file) || 'files without an extension'} files (${this.#sessions
          .languages()
          .map((language) => {
            const extensions =
              this.servers.find((server) => server.language === language)?.extensions ?? [];
            return `${language}: ${extensions.join(' ')}`;
          })
          .join('; ')}).`,
        { code: 'server-not-found' },
      );
    return this.#sessions.withDocuments(config, [file], signal, (session, [document]) => {
      if (document === undefined) throw new Error('unreachable: one file synced, none returned');
      return action(session, document.uri, document.version);
    });
  }

  #diagnosticsTiming(): DiagnosticsTiming {
    return {
      settleMs: this.#options.diagnosticsSettleMs ?? 300,
      timeoutMs: this.#options.diagnosticsTimeoutMs ?? 60_000,
    };
  }

  /** The configs to ask for workspace-wide queries, each with a sample file of its language. */
  async #languagesToAsk(
    language: string | undefined,
  ): Promise<{ config: LanguageServerConfig; sample: string }[]> {
    // One config per language (the first): which server runs is picked when it starts.
    const configs = this.#sessions
      .languages()
      .filter((name) => language === undefined || name === language)
      .flatMap((name) => this.servers.find((config) => config.language === name) ?? []);
    if (configs.length === 0)
      throw new LspError(
        `No language server is configured for "${language}" (configured: ${this.#sessions.languages().join(', ')}).`,
        { code: 'server-not-found' },
      );
    const asked: { config: LanguageServerConfig; sample: string }[] = [];
    const roots = await this.realRoots();
    for (const config of configs) {
      const running = await this.#sessions.existing(config.language);
      const open = running?.documents.paths()[0];
      const sample = open ?? (await findSourceFiles(roots, config.extensions, 1)).files[0];
      if (sample === undefined) continue;
      if (
        language === undefined &&
        running === undefined &&
        (await this.#sessions.pick(config.language)) === undefined
      )
        continue;
      asked.push({ config, sample });
    }
    if (asked.length === 0) {
      const names = configs.map((config) => config.language).join(' or ');
      throw new LspError(
        language === undefined
          ? `No source files of a language with an installed server (${names}) were found in the workspace.`
          : `No ${names} source files were found in the workspace.`,
        { code: 'server-not-found' },
      );
    }
    return asked;
  }
}

/** Locations of a definition result: a single location, an array, or links (their target's selection range). */
function locationsOf(result: Location | Location[] | LocationLink[] | null): Location[] {
  if (result === null) return [];
  const list = Array.isArray(result) ? result : [result];
  return list.map((item) =>
    'targetUri' in item ? { uri: item.targetUri, range: item.targetSelectionRange } : item,
  );
}
