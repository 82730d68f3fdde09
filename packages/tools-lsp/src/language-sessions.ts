// The language servers of a workspace: one per language, started on first use, started again
// when one died, kept told of the files that changed on disk, stopped on close.
import * as fs from 'node:fs/promises';
import { LspError } from './errors.js';
import {
  findServerExecutable,
  type LanguageServerConfig,
  pathOutsideWorkspace,
  serverNotFound,
} from './language-servers.js';
import type { LspWorkspaceOptions } from './lsp-workspace.js';
import { OpenDocuments } from './open-documents.js';
import { uriOf } from './paths.js';
import { ServerProcess } from './server-process.js';
import { findSourceFiles } from './source-files.js';

/** A file open in a server: its path, URI and the version the server has. */
export interface SyncedFile {
  file: string;
  uri: string;
  version: number;
}

/** A running language server. */
export interface Session {
  server: ServerProcess;
  documents: OpenDocuments;
}

/** A change for `workspace/didChangeWatchedFiles` (type 1 created, 2 changed, 3 deleted). */
export interface WatchedFileEvent {
  uri: string;
  type: number;
}

/** Source files per language compared by {@link LanguageSessions.syncWorkspaceFiles} at most. */
const maxScannedFiles = 5_000;

/** What the sessions need from their workspace. */
export interface LanguageSessionsOptions {
  readonly options: LspWorkspaceOptions;
  readonly servers: readonly LanguageServerConfig[];
  readonly cwd: string;
  /** Real paths of the workspace roots. */
  readonly realRoots: () => Promise<string[]>;
}

/** One language server session per language, and the documents open in it. */
export class LanguageSessions {
  readonly #host: LanguageSessionsOptions;
  readonly #sessions = new Map<string, Promise<Session>>();
  /** The sessions that finished starting, by language (for the synchronous `isRunning`). */
  readonly #running = new Map<string, Session>();
  /** Per language: the source files seen at the last scan, with their mtime and size. */
  readonly #snapshots = new Map<string, Map<string, string>>();
  #closed = false;

  constructor(host: LanguageSessionsOptions) {
    this.#host = host;
  }

  /** Whether {@link close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The configured languages, each once, in order. */
  languages(): string[] {
    return [...new Set(this.#host.servers.map((config) => config.language))];
  }

  /**
   * The server a language uses: the first of its configs (in order) whose executable is found and
   * accepted (TypeScript 7's own server only where the TypeScript found is 7 or later).
   */
  async pick(
    language: string,
  ): Promise<{ config: LanguageServerConfig; executable: string } | undefined> {
    for (const config of this.#host.servers) {
      if (config.language !== language) continue;
      const executable = await this.#findExecutable(config);
      if (executable !== undefined) return { config, executable };
    }
    return undefined;
  }

  /** The session of a language that finished starting, if any (alive or not). */
  running(language: string): Session | undefined {
    return this.#running.get(language);
  }

  /** The session of a language, started or starting, if any (undefined when it failed to start). */
  async existing(language: string): Promise<Session | undefined> {
    return this.#sessions.get(language)?.catch(() => undefined);
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

  /**
   * Runs `action` with `files` (all of `config`'s language) open and up to date in the server,
   * after bringing every other open document up to date. When the server dies during the action,
   * it is started again and the action retried once (queries are idempotent).
   */
  async withDocuments<T>(
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

  /**
   * Finds the source files that changed on disk since the last scan (by mtime and size, at most
   * {@link maxScannedFiles} per language; the first scan is taken when a server starts) and
   * reports them to the running servers. Returns how many changed.
   */
  async syncWorkspaceFiles(): Promise<number> {
    let changed = 0;
    for (const [language, session] of this.#running) {
      if (!session.server.alive) continue;
      const before = this.#snapshots.get(language) ?? new Map<string, string>();
      const after = await this.#scan(session.server.config);
      this.#snapshots.set(language, after);
      const events: WatchedFileEvent[] = [];
      for (const [file, key] of after) {
        const previous = before.get(file);
        if (previous === undefined) events.push({ uri: uriOf(file), type: 1 });
        else if (previous !== key) events.push({ uri: uriOf(file), type: 2 });
      }
      for (const file of before.keys())
        if (!after.has(file)) events.push({ uri: uriOf(file), type: 3 });
      if (events.length === 0) continue;
      changed += events.length;
      session.server.notify('workspace/didChangeWatchedFiles', { changes: events });
      // The open documents may depend on what changed: each is sent again under a new version
      // (closed if gone), so diagnostics asked for next wait for an analysis made after the
      // change, not the last one before it.
      await session.documents.refreshAll({ resend: true });
    }
    return changed;
  }

  /** Tells every live server about changed files, then sends its open documents again. */
  async notifyWatchedFiles(events: readonly WatchedFileEvent[]): Promise<void> {
    for (const pending of this.#sessions.values()) {
      const session = await pending.catch(() => undefined);
      if (session === undefined || !session.server.alive) continue;
      session.server.notify('workspace/didChangeWatchedFiles', { changes: events });
      // The open documents may depend on what changed: each is sent again under a new version
      // (closed if gone), so diagnostics asked for next wait for an analysis made after the
      // change, not the last one before it.
      await session.documents.refreshAll({ resend: true });
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
        await session?.server.stop(this.#host.options.shutdownGraceMs ?? 2_000);
      }),
    );
  }

  /** Source files of `config`'s language under the roots, each with `mtime:size`. */
  async #scan(config: LanguageServerConfig): Promise<Map<string, string>> {
    const { files } = await findSourceFiles(
      await this.#host.realRoots(),
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

  async #findExecutable(config: LanguageServerConfig): Promise<string | undefined> {
    const roots = await this.#host.realRoots();
    const options = this.#host.options;
    return findServerExecutable(config, {
      root: roots[0] ?? this.#host.cwd,
      ...(options.binPaths === undefined ? {} : { binPaths: options.binPaths }),
      ...(options.env === undefined ? {} : { pathVariable: options.env.PATH }),
      ...(options.workspaceExecutables === false ? { workspaceExecutables: false } : {}),
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
    const options = this.#host.options;
    const starting = (async () => {
      const picked = await this.pick(config.language);
      const roots = await this.#host.realRoots();
      if (picked === undefined)
        throw serverNotFound(
          this.#host.servers.filter((candidate) => candidate.language === config.language),
          roots[0] ?? this.#host.cwd,
        );
      // The first scan for syncWorkspaceFiles runs while the server starts (a later change
      // before the server reads a file is merely reported once more).
      const scanning = this.#scan(picked.config);
      const server = await ServerProcess.start({
        config: picked.config,
        executable: picked.executable,
        roots,
        ...(options.workspaceExecutables === false
          ? { env: withPathOutside(options.env ?? process.env, roots[0] ?? this.#host.cwd) }
          : options.env === undefined
            ? {}
            : { env: options.env }),
        passEnv: options.passEnv,
        sandbox: options.sandbox,
        ...(options.workspaceExecutables === false ? { workspaceExecutables: false } : {}),
      });
      this.#snapshots.set(config.language, await scanning);
      return { server, documents: new OpenDocuments(server, roots) };
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
}

/** `env` whose PATH keeps only directories outside the workspace (a folder not trusted). */
function withPathOutside(env: NodeJS.ProcessEnv, root: string): NodeJS.ProcessEnv {
  return { ...env, PATH: pathOutsideWorkspace(env.PATH ?? '', root) };
}
