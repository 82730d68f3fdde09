import { realpathSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type {
  Diagnostic,
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
  findServerExecutable,
  type LanguageServerConfig,
  serverConfigFor,
  serverNotFound,
} from './language-servers.js';
import { OpenDocuments } from './open-documents.js';
import { isPathInside, realPathOf, uriOf } from './paths.js';
import { type CommandWrapper, ServerProcess } from './server-process.js';
import { findNamedFiles, findSourceFiles } from './source-files.js';
import { tsserverDiagnostics, tsserverWorkspaceSymbols } from './tsserver-passthrough.js';
import {
  digestOf,
  type FileChange,
  fileChangesOf,
  textEditsByFile,
  unifiedDiff,
  writeFileAtomically,
} from './workspace-edit.js';

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
}

/** Diagnostics of one file; `complete` is false when the server had not finished in time. */
export interface FileDiagnostics {
  /** Absolute path. */
  path: string;
  diagnostics: readonly Diagnostic[];
  complete: boolean;
}

/** A rename computed but not applied: the diff to show and the changes to write. */
export interface RenamePreview {
  /** Pass to {@link LspWorkspace.applyEdit} to write it. */
  id: string;
  /** Absolute paths of the files it changes. */
  files: string[];
  /** Unified diff, workspace-relative paths. */
  diff: string;
  /** Parts of the server's edit that are not text edits (file renames), which are not applied. */
  unsupported: string[];
}

/** A file change the app reports (a file written by another tool). */
export type FileChangeNotice = string | { path: string; type: 'created' | 'changed' | 'deleted' };

/** A file open in a server: its path, URI and the version the server has. */
interface SyncedFile {
  file: string;
  uri: string;
  version: number;
}

/** A running language server. */
interface Session {
  server: ServerProcess;
  documents: OpenDocuments;
}

/** A previewed edit kept until applied (the newest {@link maxPreviews}). */
interface StoredPreview {
  changes: FileChange[];
  digests: Map<string, string>;
}

const maxPreviews = 20;

/** Source files per language compared by {@link LspWorkspace.syncWorkspaceFiles} at most. */
const maxScannedFiles = 5_000;

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
  readonly #sessions = new Map<string, Promise<Session>>();
  /** The sessions that finished starting, by language (for the synchronous {@link isServerRunning}). */
  readonly #running = new Map<string, Session>();
  readonly #previews = new Map<string, StoredPreview>();
  /** Per language: the source files seen at the last scan, with their mtime and size. */
  readonly #snapshots = new Map<string, Map<string, string>>();
  #previewCounter = 0;
  #realRoots: Promise<string[]> | undefined;
  #displayBases: string[] | undefined;
  #closed = false;

  constructor(options: LspWorkspaceOptions) {
    this.#options = options;
    this.cwd = path.resolve(options.cwd);
    this.roots = (options.roots ?? [this.cwd]).map((root) => path.resolve(this.cwd, root));
    this.servers = options.servers ?? defaultLanguageServers;
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
    for (const language of this.#languages()) {
      const picked = await this.#pick(language);
      if (picked !== undefined)
        found.push({ language, command: picked.config.command, executable: picked.executable });
    }
    return found;
  }

  /** The configured languages, each once, in order. */
  #languages(): string[] {
    return [...new Set(this.servers.map((config) => config.language))];
  }

  /**
   * The server a language uses: the first of its configs (in order) whose executable is found and
   * accepted (TypeScript 7's own server only where the TypeScript found is 7 or later).
   */
  async #pick(
    language: string,
  ): Promise<{ config: LanguageServerConfig; executable: string } | undefined> {
    for (const config of this.servers) {
      if (config.language !== language) continue;
      const executable = await this.#findExecutable(config);
      if (executable !== undefined) return { config, executable };
    }
    return undefined;
  }

  /** The servers running now (language and process id). */
  async runningServers(): Promise<{ language: string; pid: number }[]> {
    const running: { language: string; pid: number }[] = [];
    for (const [language, pending] of this.#sessions) {
      const session = await pending.catch(() => undefined);
      if (session?.server.alive === true) running.push({ language, pid: session.server.pid });
    }
    return running;
  }

  /** True when the server for `file`'s language is running (a call will not wait for a start). */
  isServerRunning(file: string): boolean {
    const config = this.configFor(file);
    return config !== undefined && this.#running.get(config.language)?.server.alive === true;
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
      const running = this.#running.get(config.language);
      const unopened = samples.filter((file) => running?.documents.has(file) !== true).length;
      if (unopened > 1)
        options.onProgress?.(`Loading ${unopened} ${config.language} projects for the search…`);
      const symbols = await this.#withDocuments(config, samples, options.signal, ({ server }) =>
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
      this.#diagnosticsOf(session, { file, uri, version }, signal),
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
      const checked = await this.#withDocuments(
        config,
        found.files,
        options.signal,
        (session, documents) =>
          Promise.all(
            documents.map((document) => this.#diagnosticsOf(session, document, options.signal)),
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
    const { edits, unsupported } = textEditsByFile(edit ?? {});
    const roots = await this.realRoots();
    const outside: string[] = [];
    for (const target of edits.keys()) {
      const real = await realPathOf(target);
      if (!roots.some((root) => isPathInside(root, real))) outside.push(real);
    }
    if (outside.length > 0)
      throw new LspError(
        `The rename would change files outside the workspace (${outside.join(', ')}); it is refused.`,
        { code: 'request-failed' },
      );
    const changes = await fileChangesOf(edits);
    if (changes.length === 0)
      throw new LspError('The language server found nothing to rename at this position.', {
        code: 'request-failed',
      });
    this.#previewCounter += 1;
    const id = `rename-${this.#previewCounter}`;
    this.#previews.set(id, {
      changes,
      digests: new Map(changes.map((change) => [change.path, digestOf(change.before)])),
    });
    for (const old of [...this.#previews.keys()].slice(0, -maxPreviews)) this.#previews.delete(old);
    return {
      id,
      files: changes.map((change) => change.path),
      diff: await unifiedDiff(changes, (target) => this.display(target)),
      unsupported,
    };
  }

  /** The files a stored preview would write (absolute), or undefined when the id is unknown. */
  previewFiles(id: string): string[] | undefined {
    return this.#previews.get(id)?.changes.map((change) => change.path);
  }

  /**
   * Writes a previewed edit. Refuses (`LspError`, nothing written) when any of its files changed
   * since the preview; each file is replaced atomically and the servers are told.
   */
  async applyEdit(id: string): Promise<{ files: string[] }> {
    const preview = this.#previews.get(id);
    if (preview === undefined)
      throw new LspError(
        `No previewed edit "${id}" (previews are kept until applied, the newest ${maxPreviews}).`,
        {
          code: 'request-failed',
        },
      );
    for (const change of preview.changes) {
      const current = await fs.readFile(change.path, 'utf8').catch(() => undefined);
      if (current === undefined || digestOf(current) !== preview.digests.get(change.path))
        throw new LspError(
          `${this.display(change.path)} changed since the rename was previewed; preview it again.`,
          { code: 'request-failed' },
        );
    }
    for (const change of preview.changes) await writeFileAtomically(change.path, change.after);
    this.#previews.delete(id);
    const files = preview.changes.map((change) => change.path);
    await this.notifyFilesChanged(files);
    return { files };
  }

  /**
   * Finds the source files that changed on disk since the last scan (created, changed, deleted:
   * by mtime and size, at most {@link maxScannedFiles} per language; the first scan is taken
   * when a server starts) and reports them to the running servers. For an app to call after a
   * tool that may have changed files it cannot name (a shell command). Returns how many changed.
   */
  async syncWorkspaceFiles(): Promise<number> {
    let changed = 0;
    for (const [language, session] of this.#running) {
      if (!session.server.alive) continue;
      const before = this.#snapshots.get(language) ?? new Map<string, string>();
      const after = await this.#scan(session.server.config);
      this.#snapshots.set(language, after);
      const events: { uri: string; type: number }[] = [];
      for (const [file, key] of after) {
        const previous = before.get(file);
        if (previous === undefined) events.push({ uri: uriOf(file), type: 1 });
        else if (previous !== key) events.push({ uri: uriOf(file), type: 2 });
      }
      for (const file of before.keys())
        if (!after.has(file)) events.push({ uri: uriOf(file), type: 3 });
      if (events.length === 0) continue;
      changed += events.length;
      await session.documents.refreshAll();
      session.server.notify('workspace/didChangeWatchedFiles', { changes: events });
    }
    return changed;
  }

  /** Source files of `config`'s language under the roots, each with `mtime:size`. */
  async #scan(config: LanguageServerConfig): Promise<Map<string, string>> {
    const { files } = await findSourceFiles(
      await this.realRoots(),
      config.extensions,
      maxScannedFiles,
    );
    const entries = await Promise.all(
      files.map(async (file) => {
        const stats = await fs.stat(file, { bigint: true }).catch(() => undefined);
        return stats === undefined
          ? undefined
          : ([file, `${stats.mtimeNs}:${stats.size}`] as const);
      }),
    );
    return new Map(entries.filter((entry) => entry !== undefined));
  }

  /**
   * Tells the running servers that files changed on disk (written by another tool): open ones are
   * sent again, others reported as `workspace/didChangeWatchedFiles`. A bare path counts as
   * changed when it exists and deleted when not.
   */
  async notifyFilesChanged(changes: readonly FileChangeNotice[]): Promise<void> {
    const events: { uri: string; type: number }[] = [];
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
    for (const pending of this.#sessions.values()) {
      const session = await pending.catch(() => undefined);
      if (session === undefined || !session.server.alive) continue;
      await session.documents.refreshAll();
      session.server.notify('workspace/didChangeWatchedFiles', { changes: events });
    }
  }

  /** Stops every server (shutdown, exit, then its process group killed); further calls fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    this.#running.clear();
    this.#snapshots.clear();
    await Promise.all(
      sessions.map(async (pending) => {
        const session = await pending.catch(() => undefined);
        await session?.server.stop(this.#options.shutdownGraceMs ?? 2_000);
      }),
    );
  }

  /** {@link close}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #findExecutable(config: LanguageServerConfig): Promise<string | undefined> {
    const roots = await this.realRoots();
    return findServerExecutable(config, {
      root: roots[0] ?? this.cwd,
      ...(this.#options.binPaths === undefined ? {} : { binPaths: this.#options.binPaths }),
      ...(this.#options.env === undefined ? {} : { pathVariable: this.#options.env.PATH }),
    });
  }

  /** The running session of a language, started (or started again after a crash) when needed. */
  async #session(config: LanguageServerConfig): Promise<Session> {
    if (this.#closed) throw new LspError('The LSP workspace is closed.', { code: 'closed' });
    const existing = this.#sessions.get(config.language);
    if (existing !== undefined) {
      const session = await existing.catch(() => undefined);
      if (session?.server.alive === true) return session;
      if (this.#sessions.get(config.language) !== existing) return this.#session(config);
      this.#sessions.delete(config.language);
    }
    const starting = (async () => {
      const picked = await this.#pick(config.language);
      const roots = await this.realRoots();
      if (picked === undefined)
        throw serverNotFound(
          this.servers.filter((candidate) => candidate.language === config.language),
          roots[0] ?? this.cwd,
        );
      // The first scan for syncWorkspaceFiles runs while the server starts (a later change
      // before the server reads a file is merely reported once more).
      const scanning = this.#scan(picked.config);
      const server = await ServerProcess.start({
        config: picked.config,
        executable: picked.executable,
        roots,
        ...(this.#options.env === undefined ? {} : { env: this.#options.env }),
        passEnv: this.#options.passEnv,
        sandbox: this.#options.sandbox,
      });
      this.#snapshots.set(config.language, await scanning);
      return { server, documents: new OpenDocuments(server) };
    })();
    this.#sessions.set(config.language, starting);
    try {
      const session = await starting;
      if (this.#closed) {
        await session.server.stop(0);
        throw new LspError('The LSP workspace is closed.', { code: 'closed' });
      }
      this.#running.set(config.language, session);
      return session;
    } catch (error) {
      if (this.#sessions.get(config.language) === starting) this.#sessions.delete(config.language);
      throw error;
    }
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
        `No language server handles ${path.extname(file) || 'files without an extension'} files (${this.#languages()
          .map((language) => {
            const extensions =
              this.servers.find((server) => server.language === language)?.extensions ?? [];
            return `${language}: ${extensions.join(' ')}`;
          })
          .join('; ')}).`,
        { code: 'server-not-found' },
      );
    return this.#withDocuments(config, [file], signal, (session, [document]) => {
      if (document === undefined) throw new Error('unreachable: one file synced, none returned');
      return action(session, document.uri, document.version);
    });
  }

  /**
   * Runs `action` with `files` (all of `config`'s language) open and up to date in the server,
   * after bringing every other open document up to date. When the server dies during the action,
   * it is started again and the action retried once (queries are idempotent).
   */
  async #withDocuments<T>(
    config: LanguageServerConfig,
    files: readonly string[],
    signal: AbortSignal | undefined,
    action: (session: Session, documents: SyncedFile[]) => Promise<T> | T,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted === true) throw new LspError('Cancelled', { code: 'cancelled' });
      const session = await this.#session(config);
      try {
        await session.documents.refreshAll();
        const documents: SyncedFile[] = [];
        for (const file of files) documents.push({ file, ...(await session.documents.sync(file)) });
        return await action(session, documents);
      } catch (error) {
        const died =
          LspError.isInstance(error) && error.code === 'server-exited' && !session.server.alive;
        if (!died || attempt >= 2 || this.#closed) throw error;
      }
    }
  }

  async #diagnosticsOf(
    session: Session,
    document: { file: string; uri: string; version: number },
    signal: AbortSignal | undefined,
  ): Promise<FileDiagnostics> {
    if (session.server.config.tsserverPassthrough === true) {
      try {
        const diagnostics = await tsserverDiagnostics(session.server, document.file, signal);
        return { path: document.file, diagnostics, complete: true };
      } catch (error) {
        // A server without the tsserver passthrough command: wait for pushed diagnostics instead.
        if (!LspError.isInstance(error) || error.code !== 'request-failed') throw error;
      }
    }
    if (session.server.capabilities.diagnosticProvider !== undefined) {
      const report = await session.server.request<{ kind: string; items?: Diagnostic[] }>(
        'textDocument/diagnostic',
        { textDocument: { uri: document.uri } },
        signal,
      );
      return { path: document.file, diagnostics: report.items ?? [], complete: true };
    }
    return this.#pushedDiagnostics(session.server, document, signal);
  }

  /**
   * Waits for the server to publish diagnostics for the document's current version (or, from a
   * server that does not send versions, any published after it was sent), then for
   * `diagnosticsSettleMs` without a newer publication.
   */
  #pushedDiagnostics(
    server: ServerProcess,
    document: { file: string; uri: string; version: number },
    signal: AbortSignal | undefined,
  ): Promise<FileDiagnostics> {
    const settleMs = this.#options.diagnosticsSettleMs ?? 300;
    const timeoutMs = this.#options.diagnosticsTimeoutMs ?? 60_000;
    const sentAt = server.diagnosticsSequence;
    const current = () => {
      const published = server.publishedDiagnostics(document.uri);
      if (published === undefined) return undefined;
      if (published.version !== undefined)
        return published.version >= document.version ? published : undefined;
      return published.sequence > sentAt ? published : undefined;
    };
    return new Promise<FileDiagnostics>((resolve, reject) => {
      let settleTimer: NodeJS.Timeout | undefined;
      const finish = (complete: boolean) => {
        cleanup();
        const published = server.publishedDiagnostics(document.uri);
        resolve({ path: document.file, diagnostics: published?.diagnostics ?? [], complete });
      };
      const onPublished = (uri: string) => {
        if (uri !== document.uri || current() === undefined) return;
        clearTimeout(settleTimer);
        settleTimer = setTimeout(() => finish(true), settleMs);
      };
      const onAbort = () => {
        cleanup();
        reject(new LspError('Cancelled while waiting for diagnostics', { code: 'cancelled' }));
      };
      const deadline = setTimeout(() => finish(false), timeoutMs);
      const unsubscribe = server.onDiagnostics(onPublished);
      const cleanup = () => {
        clearTimeout(settleTimer);
        clearTimeout(deadline);
        unsubscribe();
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      void server.exited.then(() => {
        cleanup();
        reject(
          new LspError(
            `The ${server.config.language} language server exited while checking ${document.file}`,
            { code: 'server-exited' },
          ),
        );
      });
      if (current() !== undefined) onPublished(document.uri);
    });
  }

  /** The configs to ask for workspace-wide queries, each with a sample file of its language. */
  async #languagesToAsk(
    language: string | undefined,
  ): Promise<{ config: LanguageServerConfig; sample: string }[]> {
    // One config per language (the first): which server runs is picked when it starts.
    const configs = this.#languages()
      .filter((name) => language === undefined || name === language)
      .flatMap((name) => this.servers.find((config) => config.language === name) ?? []);
    if (configs.length === 0)
      throw new LspError(
        `No language server is configured for "${language}" (configured: ${this.#languages().join(', ')}).`,
        { code: 'server-not-found' },
      );
    const asked: { config: LanguageServerConfig; sample: string }[] = [];
    const roots = await this.realRoots();
    for (const config of configs) {
      const running = await this.#sessions.get(config.language)?.catch(() => undefined);
      const open = running?.documents.paths()[0];
      const sample = open ?? (await findSourceFiles(roots, config.extensions, 1)).files[0];
      if (sample === undefined) continue;
      if (
        language === undefined &&
        running === undefined &&
        (await this.#pick(config.language)) === undefined
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
