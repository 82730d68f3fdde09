import * as fs from 'node:fs/promises';
import { readFileInside, uriOf } from './paths.js';
import type { ServerProcess } from './server-process.js';

/** What a document looked like on disk when last sent to the server. */
interface OpenDocument {
  uri: string;
  version: number;
  mtimeNs: bigint;
  ctimeNs: bigint;
  size: bigint;
}

/** A document as synced: its URI and the version the server has. */
export interface SyncedDocument {
  uri: string;
  version: number;
}

/**
 * The documents one server has open, kept equal to the files on disk: before a request, a file
 * whose mtime, ctime or size changed since it was sent is sent again (`didChange`, whole text),
 * and a deleted one is closed. Edits made by other tools (or editors) are seen this way.
 */
export class OpenDocuments {
  readonly #server: ServerProcess;
  readonly #roots: readonly string[];
  readonly #documents = new Map<string, OpenDocument>();

  /** `roots`: real paths; only files inside them are sent (see `readFileInside`). */
  constructor(server: ServerProcess, roots: readonly string[]) {
    this.#server = server;
    this.#roots = roots;
  }

  /** Paths of the open documents. */
  paths(): string[] {
    return [...this.#documents.keys()];
  }

  /** True when `file` is open. */
  has(file: string): boolean {
    return this.#documents.has(file);
  }

  /**
   * Opens `file` (`didOpen`) or, when it changed on disk since it was sent, sends its new text
   * (`didChange`). With `resend`, an open document is sent again under a new version even when
   * unchanged. Throws the file system's error when it cannot be read.
   */
  async sync(file: string, options: { resend?: boolean } = {}): Promise<SyncedDocument> {
    const stats = await fs.stat(file, { bigint: true });
    const known = this.#documents.get(file);
    if (
      options.resend !== true &&
      known !== undefined &&
      known.mtimeNs === stats.mtimeNs &&
      known.ctimeNs === stats.ctimeNs &&
      known.size === stats.size
    )
      return { uri: known.uri, version: known.version };
    // The server may be the repository's own: a file swapped for a link out is not sent to it.
    const text = await readFileInside(file, this.#roots);
    if (text === undefined)
      throw Object.assign(new Error(`${file} is not a regular file inside the workspace`), {
        code: 'EACCES',
      });
    // Stat again after reading: a write between stat and read is caught by the next sync.
    const after = await fs.stat(file, { bigint: true });
    const uri = uriOf(file);
    if (known === undefined) {
      const document = {
        uri,
        version: 1,
        mtimeNs: after.mtimeNs,
        ctimeNs: after.ctimeNs,
        size: after.size,
      };
      this.#documents.set(file, document);
      this.#server.notify('textDocument/didOpen', {
        textDocument: {
          uri,
          languageId: this.#server.config.languageIdOf(file),
          version: 1,
          text,
        },
      });
      return { uri, version: 1 };
    }
    known.version += 1;
    known.mtimeNs = after.mtimeNs;
    known.ctimeNs = after.ctimeNs;
    known.size = after.size;
    this.#server.notify('textDocument/didChange', {
      textDocument: { uri, version: known.version },
      contentChanges: [{ text }],
    });
    return { uri, version: known.version };
  }

  /** Closes `file` if open (`didClose`). */
  close(file: string): void {
    const known = this.#documents.get(file);
    if (known === undefined) return;
    this.#documents.delete(file);
    this.#server.notify('textDocument/didClose', { textDocument: { uri: known.uri } });
  }

  /**
   * Brings every open document up to date with the disk: changed ones are sent again (with
   * `resend`, every one), deleted ones closed. Returns the paths sent again or closed.
   */
  async refreshAll(options: { resend?: boolean } = {}): Promise<string[]> {
    const changed: string[] = [];
    await Promise.all(
      [...this.#documents.entries()].map(async ([file, known]) => {
        const before = known.version;
        try {
          const synced = await this.sync(file, options);
          if (synced.version !== before) changed.push(file);
        } catch {
          this.close(file);
          changed.push(file);
        }
      }),
    );
    return changed;
  }
}
