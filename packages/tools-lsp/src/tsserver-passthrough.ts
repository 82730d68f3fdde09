import type { Diagnostic, SymbolInformation } from 'vscode-languageserver-protocol';
import { uriOf } from './paths.js';
import type { ServerProcess } from './server-process.js';

/**
 * Requests sent to tsserver itself through typescript-language-server's
 * `typescript.tsserverRequest` command, where the LSP side answers less than tsserver can.
 */

/** A tsserver position span (1-based line and offset). */
interface TsserverSpan {
  start: { line: number; offset: number };
  end: { line: number; offset: number };
}

/** A tsserver diagnostic. */
interface TsserverDiagnostic extends TsserverSpan {
  text: string;
  code?: number;
  category?: string;
}

/** A tsserver `navto` item. */
interface TsserverNavigateToItem extends TsserverSpan {
  name: string;
  kind: string;
  file: string;
  containerName?: string;
}

async function tsserverRequest<T>(
  server: ServerProcess,
  command: string,
  args: Record<string, unknown>,
  signal: AbortSignal | undefined,
): Promise<T[]> {
  const response = await server.request<{ body?: T[] } | T[] | null>(
    'workspace/executeCommand',
    { command: 'typescript.tsserverRequest', arguments: [command, args] },
    signal,
  );
  return Array.isArray(response) ? response : (response?.body ?? []);
}

const rangeOf = (span: TsserverSpan) => ({
  start: { line: span.start.line - 1, character: span.start.offset - 1 },
  end: { line: span.end.line - 1, character: span.end.offset - 1 },
});

/**
 * Syntactic and semantic diagnostics of a file, asked of tsserver directly: an answer for the
 * file's current text, with no waiting for pushed diagnostics (which this server skips when
 * nothing changed).
 */
export async function tsserverDiagnostics(
  server: ServerProcess,
  file: string,
  signal: AbortSignal | undefined,
): Promise<Diagnostic[]> {
  const ask = (command: string) =>
    tsserverRequest<TsserverDiagnostic>(
      server,
      command,
      { file, includeLinePosition: false },
      signal,
    );
  const [syntactic, semantic] = await Promise.all([
    ask('syntacticDiagnosticsSync'),
    ask('semanticDiagnosticsSync'),
  ]);
  return [...syntactic, ...semantic].map((item) => ({
    range: rangeOf(item),
    message: item.text,
    severity:
      item.category === 'error'
        ? 1
        : item.category === 'warning'
          ? 2
          : item.category === 'suggestion'
            ? 4
            : 3,
    source: 'typescript',
    ...(item.code === undefined ? {} : { code: item.code }),
  }));
}

/** LSP `SymbolKind` of a tsserver script element kind. */
const symbolKinds: Record<string, number> = {
  module: 2,
  class: 5,
  'local class': 5,
  method: 6,
  property: 7,
  getter: 7,
  setter: 7,
  constructor: 9,
  enum: 10,
  interface: 11,
  function: 12,
  'local function': 12,
  var: 13,
  let: 13,
  'local var': 13,
  const: 14,
  'enum member': 22,
  'type parameter': 26,
  type: 26,
  alias: 13,
};

/**
 * Symbols matching `query` in every project tsserver has loaded (`navto` without a file;
 * typescript-language-server's `workspace/symbol` searches only the last opened file's project).
 */
export async function tsserverWorkspaceSymbols(
  server: ServerProcess,
  query: string,
  signal: AbortSignal | undefined,
): Promise<SymbolInformation[]> {
  const items = await tsserverRequest<TsserverNavigateToItem>(
    server,
    'navto',
    { searchValue: query, maxResultCount: 1000 },
    signal,
  );
  return items.map((item) => ({
    name: item.name,
    kind: ((Object.hasOwn(symbolKinds, item.kind) ? symbolKinds[item.kind] : undefined) ??
      13) as SymbolInformation['kind'],
    location: { uri: uriOf(item.file), range: rangeOf(item) },
    ...(item.containerName ? { containerName: item.containerName } : {}),
  }));
}
