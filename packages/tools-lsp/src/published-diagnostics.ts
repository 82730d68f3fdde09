/**
 * The diagnostics a language server publishes (`textDocument/publishDiagnostics`), kept within
 * bounds. A server is someone else's program: one that publishes a million diagnostics for a
 * file, or diagnostics for a hundred thousand files, must not grow the client's memory without
 * end. Per file the most severe are kept (errors first), each reduced to what the tools show with
 * its message clipped; past the file or total bound the files published longest ago are dropped.
 */
import type { Diagnostic, PublishDiagnosticsParams } from 'vscode-languageserver-protocol';

/** Diagnostics last published for one document. */
export interface PublishedDiagnostics {
  diagnostics: readonly Diagnostic[];
  /** The document version they are for, when the server says. */
  version: number | undefined;
  /** Order of arrival across all documents (increasing). */
  sequence: number;
  /** How many the server published beyond those kept (over the bound, or malformed). */
  omitted: number;
}

/** Bounds of {@link PublishedDiagnosticsStore}. */
export interface PublishedDiagnosticsLimits {
  /** Diagnostics kept per file, the most severe first [1000]. */
  perFile: number;
  /** Files whose diagnostics are kept; past it the one published longest ago is dropped [1000]. */
  files: number;
  /** Diagnostics kept over all files [50000]. */
  total: number;
  /** Characters of a diagnostic's message, code or source kept [1000]. */
  textChars: number;
}

/** Defaults of {@link PublishedDiagnosticsLimits}. */
export const defaultPublishedDiagnosticsLimits: PublishedDiagnosticsLimits = {
  perFile: 1_000,
  files: 1_000,
  total: 50_000,
  textChars: 1_000,
};

/**
 * The diagnostics of one answer (a pull report, tsserver's list) within the per-file bound:
 * the most severe, reduced and clipped as stored ones are, and how many were left out.
 */
export function boundedDiagnostics(
  items: unknown,
  limits: PublishedDiagnosticsLimits = defaultPublishedDiagnosticsLimits,
): { diagnostics: Diagnostic[]; omitted: number } {
  const all: readonly unknown[] = Array.isArray(items) ? items : [];
  const diagnostics = mostSevere(all, limits);
  return { diagnostics, omitted: all.length - diagnostics.length };
}

/** The publications of one server, bounded; the newest per document. */
export class PublishedDiagnosticsStore {
  readonly #limits: PublishedDiagnosticsLimits;
  // Insertion order is publication order: a republished file moves to the end.
  readonly #byUri = new Map<string, PublishedDiagnostics>();
  #total = 0;
  #sequence = 0;

  constructor(limits: Partial<PublishedDiagnosticsLimits> = {}) {
    this.#limits = { ...defaultPublishedDiagnosticsLimits, ...limits };
  }

  /** The sequence number of the last publication (0 before any). */
  get sequence(): number {
    return this.#sequence;
  }

  /** How many files and diagnostics are kept now. */
  get size(): { files: number; diagnostics: number } {
    return { files: this.#byUri.size, diagnostics: this.#total };
  }

  /** The diagnostics last published for `uri`, if kept. */
  get(uri: string): PublishedDiagnostics | undefined {
    return this.#byUri.get(uri);
  }

  /** Keeps a publication (what fits of it); returns the uri, or `undefined` for a malformed one. */
  publish(params: PublishDiagnosticsParams): string | undefined {
    if (params === null || typeof params !== 'object' || typeof params.uri !== 'string')
      return undefined;
    const { uri } = params;
    const published: unknown[] = Array.isArray(params.diagnostics) ? params.diagnostics : [];
    const kept = mostSevere(published, this.#limits);
    this.#sequence += 1;
    const previous = this.#byUri.get(uri);
    if (previous !== undefined) {
      this.#total -= previous.diagnostics.length;
      this.#byUri.delete(uri);
    }
    this.#byUri.set(uri, {
      diagnostics: kept,
      version: typeof params.version === 'number' ? params.version : undefined,
      sequence: this.#sequence,
      omitted: published.length - kept.length,
    });
    this.#total += kept.length;
    this.#evict(uri);
    return uri;
  }

  /** Drops the files published longest ago until both bounds hold; never the one just kept. */
  #evict(newest: string): void {
    for (const [uri, entry] of this.#byUri) {
      if (this.#byUri.size <= this.#limits.files && this.#total <= this.#limits.total) return;
      if (uri === newest) return;
      this.#byUri.delete(uri);
      this.#total -= entry.diagnostics.length;
    }
  }
}

/**
 * Up to `perFile` well-formed diagnostics, errors first, then warnings, information, hints (in
 * the server's order within a severity): one pass to sort into four lists, so a million costs no
 * more than reading them.
 */
function mostSevere(
  published: readonly unknown[],
  limits: PublishedDiagnosticsLimits,
): Diagnostic[] {
  const bySeverity: Diagnostic[][] = [[], [], [], []];
  let room = limits.perFile;
  // Errors alone may fill the bound: stop reading once they do.
  for (const item of published) {
    const diagnostic = wellFormed(item, limits.textChars);
    if (diagnostic === undefined) continue;
    const bucket = bySeverity[(diagnostic.severity ?? 1) - 1] as Diagnostic[];
    if (bucket.length >= limits.perFile) continue;
    bucket.push(diagnostic);
    if (diagnostic.severity === undefined || diagnostic.severity === 1) {
      room -= 1;
      if (room === 0) break;
    }
  }
  return bySeverity.flat().slice(0, limits.perFile);
}

/** What the tools show of a diagnostic, text clipped; `undefined` when it is not one. */
function wellFormed(item: unknown, textChars: number): Diagnostic | undefined {
  if (item === null || typeof item !== 'object') return undefined;
  const candidate = item as Record<string, unknown>;
  const range = candidate.range as Diagnostic['range'] | undefined;
  if (!isPosition(range?.start) || !isPosition(range?.end)) return undefined;
  const raw = candidate.message;
  const message =
    typeof raw === 'string'
      ? raw
      : raw !== null &&
          typeof raw === 'object' &&
          typeof (raw as { value?: unknown }).value === 'string'
        ? (raw as { value: string }).value
        : undefined;
  if (message === undefined) return undefined;
  const diagnostic: Diagnostic = {
    range: {
      start: { line: range.start.line, character: range.start.character },
      end: { line: range.end.line, character: range.end.character },
    },
    message: message.slice(0, textChars),
  };
  const severity = candidate.severity;
  if (severity === 1 || severity === 2 || severity === 3 || severity === 4)
    diagnostic.severity = severity;
  const code = candidate.code;
  if (typeof code === 'number' && Number.isFinite(code)) diagnostic.code = code;
  else if (typeof code === 'string') diagnostic.code = code.slice(0, textChars);
  if (typeof candidate.source === 'string')
    diagnostic.source = candidate.source.slice(0, textChars);
  return diagnostic;
}

function isPosition(value: unknown): value is { line: number; character: number } {
  if (value === null || typeof value !== 'object') return false;
  const { line, character } = value as { line?: unknown; character?: unknown };
  return (
    Number.isInteger(line) &&
    (line as number) >= 0 &&
    Number.isInteger(character) &&
    (character as number) >= 0
  );
}
