// A file's diagnostics from its server: through tsserver's own command, pulled
// (`textDocument/diagnostic`), or waited for as the server publishes them.
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { LspError } from './errors.js';
import { boundedDiagnostics } from './published-diagnostics.js';
import type { ServerProcess } from './server-process.js';
import { tsserverDiagnostics } from './tsserver-passthrough.js';

/** Diagnostics of one file; `complete` is false when the server had not finished in time. */
export interface FileDiagnostics {
  /** Absolute path. */
  path: string;
  diagnostics: readonly Diagnostic[];
  complete: boolean;
  /** Diagnostics the server reported beyond those kept (see published-diagnostics.ts) [0]. */
  omitted?: number;
}

/** A document as synced to the server: the version its diagnostics must be for. */
export interface CheckedDocument {
  readonly file: string;
  readonly uri: string;
  readonly version: number;
}

/** How long to wait for pushed diagnostics. */
export interface DiagnosticsTiming {
  /** How long diagnostics must stay unchanged before pushed ones count as final, in ms. */
  readonly settleMs: number;
  /** Longest wait for pushed diagnostics, in ms; then what has arrived is returned. */
  readonly timeoutMs: number;
}

/** The diagnostics of one synced document, by the best way its server offers. */
export async function diagnosticsOf(
  server: ServerProcess,
  document: CheckedDocument,
  timing: DiagnosticsTiming,
  signal: AbortSignal | undefined,
): Promise<FileDiagnostics> {
  if (server.config.tsserverPassthrough === true) {
    try {
      const diagnostics = await tsserverDiagnostics(server, document.file, signal);
      return { path: document.file, ...boundedDiagnostics(diagnostics), complete: true };
    } catch (error) {
      // A server without the tsserver passthrough command: wait for pushed diagnostics instead.
      if (!LspError.isInstance(error) || error.code !== 'request-failed') throw error;
    }
  }
  if (server.capabilities.diagnosticProvider !== undefined) {
    const report = await server.request<{ kind: string; items?: Diagnostic[] }>(
      'textDocument/diagnostic',
      { textDocument: { uri: document.uri } },
      signal,
    );
    return { path: document.file, ...boundedDiagnostics(report.items), complete: true };
  }
  return pushedDiagnostics(server, document, timing, signal);
}

/**
 * Waits for the server to publish diagnostics for the document's current version (or, from a
 * server that does not send versions, any published after it was sent), then for
 * `settleMs` without a newer publication.
 */
function pushedDiagnostics(
  server: ServerProcess,
  document: CheckedDocument,
  timing: DiagnosticsTiming,
  signal: AbortSignal | undefined,
): Promise<FileDiagnostics> {
  const { settleMs, timeoutMs } = timing;
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
      resolve({
        path: document.file,
        diagnostics: published?.diagnostics ?? [],
        complete,
        omitted: published?.omitted ?? 0,
      });
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
