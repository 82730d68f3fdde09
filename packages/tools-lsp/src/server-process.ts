import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { credentialFreeEnvironment } from '@agent/core';
import type {
  InitializeParams,
  InitializeResult,
  PublishDiagnosticsParams,
  ServerCapabilities,
} from 'vscode-languageserver-protocol';
import type { ProtocolConnection } from 'vscode-languageserver-protocol/node';

/** The JSON-RPC runtime, imported on the first server start (importing it costs ~35 ms). */
type Rpc = typeof import('vscode-languageserver-protocol/node');

import { LspError } from './errors.js';
import type { LanguageServerConfig } from './language-servers.js';
import { createMessageSizeGuard } from './message-size-guard.js';
import { uriOf } from './paths.js';
import { type PublishedDiagnostics, PublishedDiagnosticsStore } from './published-diagnostics.js';

/** How a server process ended. */
export interface ServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when we asked it to stop (close or restart). */
  requested: boolean;
}

/** Options of {@link ServerProcess.start}. */
export interface ServerProcessOptions {
  config: LanguageServerConfig;
  /** Absolute path of the executable. */
  executable: string;
  /** Real paths of the workspace roots; the first is the root URI. */
  roots: readonly string[];
  /** Environment of the server [process.env], without credential variables unless `passEnv` names them. */
  env?: NodeJS.ProcessEnv;
  /** Names of credential variables the server gets anyway (exact names) [none]. */
  passEnv?: readonly string[] | undefined;
  /** Wraps the command before it is spawned (an OS sandbox) [none]. */
  sandbox?: CommandWrapper | undefined;
  /** Whether programs the workspace holds may run (see {@link ServerStartContext}) [true]. */
  workspaceExecutables?: boolean;
}

/** A command before or after wrapping. */
export interface WrappableCommand {
  file: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** What a sandbox's cgroup counted for the server: out-of-memory kills, refused forks. */
export interface ServerLimitEvents {
  memoryKills: number;
  refusedForks: number;
}

/** A command as the sandbox wrapped it. */
export interface WrappedServerCommand extends WrappableCommand {
  /** Called once it exited: removes its cgroup, says which limit it ran into (when one bounds it). */
  finish?(): Promise<ServerLimitEvents>;
}

/**
 * Turns a command into the one to spawn, e.g. to run it in an OS sandbox: an `@agent/sandbox`
 * `Sandbox` fits as it is.
 */
export interface CommandWrapper {
  wrap(command: WrappableCommand): Promise<WrappedServerCommand>;
  /** A note for a server that ran into the sandbox's memory or process limit, else undefined. */
  explainLimits?(events: ServerLimitEvents): string | undefined;
}

const stderrTailChars = 4_000;

/**
 * Imports the JSON-RPC runtime. It is CommonJS: Node gives its named exports, but a bundler that
 * wraps it in a lazily loaded chunk may give only `default` (the CLI's bundle does).
 */
async function loadRpc(): Promise<Rpc> {
  const imported = (await import('vscode-languageserver-protocol/node')) as Rpc & { default?: Rpc };
  return typeof imported.createProtocolConnection === 'function' || imported.default === undefined
    ? imported
    : imported.default;
}

/**
 * Every server group still running, by its leader, killed when this process exits so none is
 * orphaned. By child, not pid: a server's pid can be a newer server's while the old one's group
 * is waited on.
 */
const liveGroups = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Whether Node has reaped the child: from then on its pid may be handed to another process. */
function reaped(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Whether `-pid` may still name the group `child` leads. Until it is reaped the pid is ours; after,
 * a process at `/proc/<pid>` is a newer one (the kernel hands a pid out again only once no process
 * bears it as its group id either), so our group is empty and group `pid` is that one's (pid_max
 * 32,768 wraps within minutes on a busy machine). Without `/proc`, undecided: ours. A few lines
 * of tools-builtin's process-group.ts: packages share code only through @agent/core, which must
 * not import node:fs.
 */
function groupIsOurs(child: ChildProcess): boolean {
  return !reaped(child) || !existsSync(`/proc/${child.pid}`);
}

/** Signals the group `child` leads while it is still ours (see {@link groupIsOurs}). */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || !groupIsOurs(child)) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: the group is gone.
  }
}

/**
 * True while a live process of the group exists. On Linux, /proc is read so that zombies (dead,
 * waiting for a parent that may never reap them, e.g. in a container whose init does not) do not
 * count; elsewhere, any member counts.
 */
function groupAlive(pid: number): boolean {
  if (process.platform === 'linux') {
    let entries: string[];
    try {
      entries = readdirSync('/proc');
    } catch {
      entries = [];
    }
    if (entries.length > 0) {
      for (const entry of entries) {
        if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
        let stat: string;
        try {
          stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        } catch {
          continue;
        }
        // Fields after the command name (which may hold spaces or parentheses): state, ppid, pgrp.
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (Number(fields[2]) === pid && fields[0] !== 'Z') return true;
      }
      return false;
    }
  }
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Waits until no live process of the group `child` led is left after a SIGKILL, polling, at most
 * `limitMs` — or until its pid is a newer process's (then the group number is that one's).
 */
async function groupGone(child: ChildProcess, pid: number, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (groupIsOurs(child) && groupAlive(pid) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 10));
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of liveGroups) killGroup(child, 'SIGKILL');
  });
}

/**
 * One language server child process and its JSON-RPC connection over stdio. The server runs in
 * its own process group (it may start helpers, as typescript-language-server starts tsserver), so
 * stopping it ends them all. Keeps the diagnostics the server publishes.
 */
export class ServerProcess {
  readonly config: LanguageServerConfig;
  readonly executable: string;
  /** Process id, also the id of its process group. */
  readonly pid: number;
  /** Resolves when the process has exited (never rejects). */
  readonly exited: Promise<ServerExit>;
  readonly #child: ChildProcess;
  #connection: ProtocolConnection;
  #capabilities: ServerCapabilities = {};
  #alive = true;
  #stopping = false;
  #stderr = '';
  #exit: ServerExit | undefined;
  #diagnostics = new PublishedDiagnosticsStore();
  #diagnosticListeners = new Set<(uri: string) => void>();
  readonly #settings: Readonly<Record<string, unknown>>;

  readonly #rpc: Rpc;

  #limitNote: string | undefined;

  private constructor(
    options: ServerProcessOptions,
    child: ChildProcess,
    rpc: Rpc,
    command: WrappedServerCommand,
  ) {
    this.#rpc = rpc;
    this.config = options.config;
    this.executable = options.executable;
    this.#settings = options.config.settings ?? {};
    if (child.pid === undefined) throw new Error('unreachable: spawned without a pid');
    this.pid = child.pid;
    this.#child = child;
    liveGroups.add(child);
    installExitHook();
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-stderrTailChars);
    });
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#alive = false;
        const exit = { code, signal, requested: this.#stopping };
        this.#exit = exit;
        // Helpers it started (tsserver) go with it, also when it crashed.
        killGroup(child, 'SIGKILL');
        this.#connection.dispose();
        void groupGone(child, this.pid, 2_000).then(async () => {
          liveGroups.delete(child);
          // Its cgroup goes with it; what it counted says whether the sandbox's limit killed it.
          const events = await command.finish?.();
          if (events !== undefined) this.#limitNote = options.sandbox?.explainLimits?.(events);
          resolve(exit);
        });
      });
    });
    // Writes to a dead server's stdin fail with EPIPE; the exit handler reports the death.
    child.stdin?.on('error', () => {});
    if (child.stdout === null || child.stdin === null)
      throw new Error('unreachable: no stdio pipes');
    // A message over the size limit stops the server (its last output says why) before the
    // reader buffers it: see message-size-guard.ts.
    const guarded = child.stdout.pipe(
      createMessageSizeGuard((why) => {
        this.#stderr = `${this.#stderr}\nagent: the server was stopped: ${why}`.slice(
          -stderrTailChars,
        );
        killGroup(child, 'SIGKILL');
      }),
    );
    this.#connection = rpc.createProtocolConnection(
      new rpc.StreamMessageReader(guarded),
      new rpc.StreamMessageWriter(child.stdin),
    );
    this.#connection.onError(() => {});
    this.#handleServerMessages(options.roots);
    this.#connection.listen();
  }

  /** Starts the server and completes the `initialize` handshake; throws `LspError` when it cannot. */
  static async start(options: ServerProcessOptions): Promise<ServerProcess> {
    const root = options.roots[0];
    if (root === undefined) throw new LspError('No workspace root', { code: 'server-exited' });
    const rpc = await loadRpc();
    const plain: WrappableCommand = {
      file: options.executable,
      args: options.config.args,
      cwd: root,
      // A server runs the workspace's code (its TypeScript, its plugins): no user's keys for it.
      env: credentialFreeEnvironment(options.env ?? process.env, { pass: options.passEnv ?? [] }),
    };
    const command: WrappedServerCommand =
      options.sandbox === undefined ? plain : await options.sandbox.wrap(plain);
    const child = spawn(command.file, [...command.args], {
      cwd: root,
      env: command.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const spawned = await new Promise<Error | undefined>((resolve) => {
      child.once('spawn', () => resolve(undefined));
      child.once('error', (error) => resolve(error));
    });
    if (spawned !== undefined) {
      void command.finish?.();
      throw new LspError(
        `Could not start the ${options.config.language} language server ${options.executable}: ${spawned.message}`,
        { code: 'server-exited', cause: spawned },
      );
    }
    const server = new ServerProcess(options, child, rpc, command);
    try {
      const initializationOptions = await options.config.initializationOptions?.({
        executable: options.executable,
        root,
        ...(options.workspaceExecutables === false ? { workspaceExecutables: false } : {}),
      });
      const params: InitializeParams = {
        // Servers exit when the client's process is gone, polling it by pid. In a sandbox's own
        // pid namespace our pid names nothing (or another process), so a sandboxed server would
        // stop itself seconds after starting: there, no pid (the sandbox dies with us anyway).
        processId: options.sandbox === undefined ? process.pid : null,
        clientInfo: { name: '@agent/tools-lsp' },
        rootUri: uriOf(root),
        rootPath: root,
        workspaceFolders: options.roots.map((folder) => ({
          uri: uriOf(folder),
          name: path.basename(folder),
        })),
        // Announced only with settings to give: pyright answers ~0.5 s later when it pulls them.
        capabilities: clientCapabilities(options.config.settings !== undefined),
        ...(initializationOptions === undefined ? {} : { initializationOptions }),
      };
      const result = await server.request<InitializeResult>('initialize', params);
      server.#capabilities = result.capabilities;
      server.notify('initialized', {});
      return server;
    } catch (error) {
      await server.stop(0);
      throw error;
    }
  }

  /** True until the process exits. */
  get alive(): boolean {
    return this.#alive;
  }

  /** What the server said it can do. */
  get capabilities(): ServerCapabilities {
    return this.#capabilities;
  }

  /** The last characters the server wrote to stderr. */
  get stderrTail(): string {
    return this.#stderr;
  }

  /**
   * Sends a request. Rejects with `LspError`: `cancelled` when `signal` aborts (the server is sent
   * `$/cancelRequest`), `server-exited` when the process dies first, `request-failed` when it
   * answers with an error.
   */
  async request<TResult>(method: string, params: unknown, signal?: AbortSignal): Promise<TResult> {
    if (!this.#alive) throw this.#exitError();
    if (signal?.aborted === true) throw new LspError('Cancelled', { code: 'cancelled' });
    const cancellation = new this.#rpc.CancellationTokenSource();
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      if (signal === undefined) return;
      onAbort = () => {
        cancellation.cancel();
        reject(new LspError(`Cancelled: ${method}`, { code: 'cancelled' }));
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
    const died = this.exited.then((): never => {
      throw this.#exitError();
    });
    // The race may settle first; a later death must not be an unhandled rejection.
    died.catch(() => {});
    try {
      return await Promise.race([
        // async: a connection that closed before the exit was seen throws synchronously.
        (async () =>
          this.#connection.sendRequest<TResult>(method, params, cancellation.token))().catch(
          (error: unknown): Promise<never> => {
            // Dead: the error once it is gone whole (its cgroup read: killed for memory?).
            if (!this.#alive) return died;
            // The pipe closed (or broke under the write: EPIPE) before the process's exit was
            // reported: wait for the exit, so the caller sees "the server died" (and retries on
            // a fresh one).
            if (
              error instanceof Error &&
              /Connection is (closed|disposed)|EPIPE|ECONNRESET|ERR_STREAM_(DESTROYED|WRITE_AFTER_END)|write after end/.test(
                error.message,
              )
            )
              return died;
            throw new LspError(
              `The ${this.config.language} language server failed ${method}: ${error instanceof Error ? error.message : String(error)}`,
              { code: 'request-failed', cause: error },
            );
          },
        ),
        aborted,
        died,
      ]);
    } finally {
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
      cancellation.dispose();
    }
  }

  /** Sends a notification; a no-op once the process is gone. */
  notify(method: string, params: unknown): void {
    if (!this.#alive) return;
    void this.#connection.sendNotification(method, params).catch(() => {});
  }

  /** The diagnostics last published for `uri`, if any (and still kept: see published-diagnostics.ts). */
  publishedDiagnostics(uri: string): PublishedDiagnostics | undefined {
    return this.#diagnostics.get(uri);
  }

  /** The sequence number the next published diagnostics will be above. */
  get diagnosticsSequence(): number {
    return this.#diagnostics.sequence;
  }

  /** How many files and diagnostics of this server's publications are kept (bounded). */
  get diagnosticsKept(): { files: number; diagnostics: number } {
    return this.#diagnostics.size;
  }

  /** Calls `listener(uri)` after each `textDocument/publishDiagnostics`; returns the unsubscribe. */
  onDiagnostics(listener: (uri: string) => void): () => void {
    this.#diagnosticListeners.add(listener);
    return () => this.#diagnosticListeners.delete(listener);
  }

  /**
   * Stops the server: `shutdown` and `exit`, then SIGTERM and SIGKILL to its whole process group
   * if it has not exited within `graceMs`.
   */
  async stop(graceMs: number): Promise<void> {
    if (!this.#alive) {
      await this.exited;
      return;
    }
    this.#stopping = true;
    const exited = this.exited.then(() => true);
    const within = (ms: number) =>
      Promise.race([
        exited,
        new Promise<false>((resolve) => setTimeout(resolve, ms, false).unref()),
      ]);
    if (graceMs > 0) {
      try {
        await Promise.race([this.#connection.sendRequest('shutdown'), within(graceMs)]);
        this.notify('exit', undefined);
      } catch {
        // A server that fails shutdown is killed below.
      }
      if (await within(graceMs)) return;
      // Its exit is reported once its group is gone and its cgroup read: it may have been reaped
      // (its pid free for another process) well before, so each kill asks whose group it is.
      killGroup(this.#child, 'SIGTERM');
      if (await within(graceMs)) return;
    }
    killGroup(this.#child, 'SIGKILL');
    await this.exited;
  }

  #exitError(): LspError {
    const exit = this.#exit;
    const how =
      exit === undefined
        ? 'is not running'
        : exit.signal !== null
          ? `was killed by ${exit.signal}`
          : `exited with code ${exit.code}`;
    const tail = this.#stderr.trim().split('\n').slice(-5).join('\n');
    const note = this.#limitNote === undefined ? '' : `\n${this.#limitNote}`;
    return new LspError(
      `The ${this.config.language} language server (${this.executable}) ${how}${tail === '' ? '' : `; its last output:\n${tail}`}${note}`,
      { code: 'server-exited' },
    );
  }

  #handleServerMessages(roots: readonly string[]): void {
    const connection = this.#connection;
    connection.onRequest('workspace/configuration', (params: { items?: { section?: string }[] }) =>
      (params.items ?? []).map((item) =>
        item.section === undefined ? null : (this.#settings[item.section] ?? null),
      ),
    );
    connection.onRequest('workspace/workspaceFolders', () =>
      roots.map((folder) => ({ uri: uriOf(folder), name: path.basename(folder) })),
    );
    connection.onRequest('client/registerCapability', () => null);
    connection.onRequest('client/unregisterCapability', () => null);
    connection.onRequest('window/workDoneProgress/create', () => null);
    connection.onRequest('window/showMessageRequest', () => null);
    connection.onRequest('workspace/applyEdit', () => ({
      applied: false,
      failureReason: 'This client applies edits only through its own tools.',
    }));
    connection.onNotification(
      'textDocument/publishDiagnostics',
      (params: PublishDiagnosticsParams) => {
        const uri = this.#diagnostics.publish(params);
        if (uri === undefined) return;
        for (const listener of this.#diagnosticListeners) listener(uri);
      },
    );
  }
}

const clientCapabilities = (configuration: boolean): InitializeParams['capabilities'] => ({
  general: { positionEncodings: ['utf-16'] },
  textDocument: {
    synchronization: { didSave: false, willSave: false, dynamicRegistration: false },
    publishDiagnostics: { versionSupport: true, relatedInformation: false },
    definition: { linkSupport: true },
    references: {},
    hover: { contentFormat: ['markdown', 'plaintext'] },
    documentSymbol: { hierarchicalDocumentSymbolSupport: true },
    rename: { prepareSupport: true },
  },
  workspace: {
    workspaceFolders: true,
    configuration,
    symbol: {},
    didChangeWatchedFiles: { dynamicRegistration: true },
    workspaceEdit: { documentChanges: true },
  },
});
