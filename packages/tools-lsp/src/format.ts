import type {
  Diagnostic,
  DocumentSymbol,
  Hover,
  Location,
  MarkedString,
  MarkupContent,
  SymbolInformation,
  WorkspaceSymbol,
} from 'vscode-languageserver-protocol';
import type { FileDiagnostics } from './lsp-workspace.js';
import { pathOfUri, readFileInside } from './paths.js';
import { defaultPublishedDiagnosticsLimits } from './published-diagnostics.js';

/** Longest source line shown beside a location. */
const maxLineChars = 160;

/**
 * Reads source lines for locations, each file once — only of files inside `roots` (real paths):
 * a location elsewhere is shown without its line (the server may be the repository's own, naming
 * `~/.ssh/id_ed25519` line by line for the client to read out).
 */
export class LineReader {
  readonly #files = new Map<string, Promise<string[] | undefined>>();
  readonly #roots: readonly string[];

  constructor(roots: readonly string[]) {
    this.#roots = roots;
  }

  /** The text of a 0-based line, trimmed and cut, or undefined when unreadable or outside. */
  async line(file: string, line: number): Promise<string | undefined> {
    let lines = this.#files.get(file);
    if (lines === undefined) {
      lines = readFileInside(file, this.#roots).then((text) => text?.split(/\r?\n/));
      this.#files.set(file, lines);
    }
    const text = (await lines)?.[line]?.trim();
    if (text === undefined) return undefined;
    return text.length > maxLineChars ? `${text.slice(0, maxLineChars)}…` : text;
  }
}

/** `path:line:column` (1-based) of a location, the path as `display` shows it. */
export function locationLabel(location: Location, display: (file: string) => string): string {
  const file = pathOfUri(location.uri);
  const shown = file === undefined ? location.uri : display(file);
  return `${shown}:${location.range.start.line + 1}:${location.range.start.character + 1}`;
}

/** One line per location: `path:line:column  source line`; at most `limit`, then a count of the rest. */
export async function formatLocations(
  locations: readonly Location[],
  options: {
    display: (file: string) => string;
    limit: number;
    /** Real paths of the roots: the only files whose lines are read. */
    roots: readonly string[];
  },
): Promise<string> {
  const lines = new LineReader(options.roots);
  const shown = await Promise.all(
    locations.slice(0, options.limit).map(async (location) => {
      const file = pathOfUri(location.uri);
      const text =
        file === undefined ? undefined : await lines.line(file, location.range.start.line);
      const label = locationLabel(location, options.display);
      return text === undefined || text === '' ? label : `${label}  ${text}`;
    }),
  );
  const rest = locations.length - shown.length;
  if (rest > 0) shown.push(`… and ${rest} more`);
  return shown.join('\n');
}

function markedText(part: MarkedString | MarkupContent): string {
  if (typeof part === 'string') return part;
  if ('kind' in part) return part.value;
  return `\`\`\`${part.language}\n${part.value}\n\`\`\``;
}

/** A hover's contents as text (Markdown as the server wrote it), trimmed. */
export function hoverText(hover: Hover): string {
  const contents = Array.isArray(hover.contents) ? hover.contents : [hover.contents];
  return contents
    .map((part) => markedText(part).trim())
    .filter((text) => text !== '')
    .join('\n\n');
}

const symbolKinds = [
  'file',
  'module',
  'namespace',
  'package',
  'class',
  'method',
  'property',
  'field',
  'constructor',
  'enum',
  'interface',
  'function',
  'variable',
  'constant',
  'string',
  'number',
  'boolean',
  'array',
  'object',
  'key',
  'null',
  'enum member',
  'struct',
  'event',
  'operator',
  'type parameter',
];

/** The lower-case name of an LSP `SymbolKind` (1-based numbering). */
export function symbolKindName(kind: number): string {
  return symbolKinds[kind - 1] ?? 'symbol';
}

/** Symbols sorted by where they start (servers list them in their own order). */
function inSourceOrder<T extends DocumentSymbol | SymbolInformation>(symbols: readonly T[]): T[] {
  const start = (symbol: T) =>
    'location' in symbol ? symbol.location.range.start : symbol.range.start;
  return [...symbols].sort(
    (a, b) => start(a).line - start(b).line || start(a).character - start(b).character,
  );
}

function lineSpan(start: number, end: number): string {
  return start === end ? `${start + 1}` : `${start + 1}-${end + 1}`;
}

/**
 * An outline: one line per symbol, `kind name  lines`, children indented two spaces; at most
 * `limit` lines, then a count of the rest.
 */
export function formatDocumentSymbols(
  symbols: readonly (DocumentSymbol | SymbolInformation)[],
  limit: number,
): string {
  const lines: string[] = [];
  let total = 0;
  const visit = (symbol: DocumentSymbol | SymbolInformation, depth: number) => {
    total += 1;
    if (lines.length < limit) {
      const range = 'location' in symbol ? symbol.location.range : symbol.range;
      const detail = 'detail' in symbol && symbol.detail ? ` ${symbol.detail}` : '';
      const container =
        'containerName' in symbol && symbol.containerName ? ` (in ${symbol.containerName})` : '';
      lines.push(
        `${'  '.repeat(depth)}${symbolKindName(symbol.kind)} ${symbol.name}${detail}${container}  ${lineSpan(range.start.line, range.end.line)}`,
      );
    }
    if ('children' in symbol)
      for (const child of inSourceOrder(symbol.children ?? [])) visit(child, depth + 1);
  };
  for (const symbol of inSourceOrder(symbols)) visit(symbol, 0);
  if (total > lines.length) lines.push(`… and ${total - lines.length} more`);
  return lines.join('\n');
}

/**
 * Workspace symbols best first: the exact name, then the same name in another case, then the
 * rest; within each, source files before declaration files (`.d.ts`) and `node_modules`.
 */
export function rankWorkspaceSymbols<T extends SymbolInformation | WorkspaceSymbol>(
  symbols: readonly T[],
  query: string,
): T[] {
  const nameRank = (name: string) =>
    name === query ? 0 : name.toLowerCase() === query.toLowerCase() ? 1 : 2;
  const fileRank = (uri: string) =>
    (uri.includes('/node_modules/') ? 2 : 0) + (/\.d\.[cm]?ts$/.test(uri) ? 1 : 0);
  return symbols
    .map((symbol, index) => ({ symbol, index }))
    .sort(
      (a, b) =>
        nameRank(a.symbol.name) - nameRank(b.symbol.name) ||
        fileRank(a.symbol.location.uri) - fileRank(b.symbol.location.uri) ||
        a.index - b.index,
    )
    .map(({ symbol }) => symbol);
}

/** One line per symbol: `kind name  path:line` (with its container); at most `limit`. */
export function formatWorkspaceSymbols(
  symbols: readonly (SymbolInformation | WorkspaceSymbol)[],
  options: { display: (file: string) => string; limit: number },
): string {
  const lines = symbols.slice(0, options.limit).map((symbol) => {
    const location = symbol.location;
    const file = pathOfUri(location.uri);
    const shown = file === undefined ? location.uri : options.display(file);
    const where = 'range' in location ? `${shown}:${location.range.start.line + 1}` : shown;
    const container = symbol.containerName ? ` (in ${symbol.containerName})` : '';
    return `${symbolKindName(symbol.kind)} ${symbol.name}${container}  ${where}`;
  });
  const rest = symbols.length - lines.length;
  if (rest > 0) lines.push(`… and ${rest} more`);
  return lines.join('\n');
}

const severityNames = ['error', 'warning', 'info', 'hint'];

function diagnosticCode(diagnostic: Diagnostic): string {
  if (diagnostic.code === undefined) return '';
  if (
    (diagnostic.source === 'typescript' || diagnostic.source === 'ts') &&
    typeof diagnostic.code === 'number'
  )
    return ` TS${diagnostic.code}`;
  return ` [${diagnostic.code}]`;
}

/** Counts of diagnostics by severity name. */
export function countBySeverity(files: readonly FileDiagnostics[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const file of files)
    for (const diagnostic of file.diagnostics) {
      const name = severityNames[(diagnostic.severity ?? 1) - 1] ?? 'error';
      counts[name] = (counts[name] ?? 0) + 1;
    }
  return counts;
}

/**
 * `path:line:column severity code: message` per diagnostic (first line of the message), errors
 * first; at most `limit` lines, then a count of the rest; and a summary line.
 */
export function formatDiagnostics(
  files: readonly FileDiagnostics[],
  options: { display: (file: string) => string; limit: number; truncatedFiles?: boolean },
): string {
  const entries = files.flatMap((file) =>
    file.diagnostics.map((diagnostic) => ({ file: file.path, diagnostic })),
  );
  entries.sort(
    (a, b) =>
      (a.diagnostic.severity ?? 1) - (b.diagnostic.severity ?? 1) ||
      a.file.localeCompare(b.file) ||
      a.diagnostic.range.start.line - b.diagnostic.range.start.line,
  );
  const lines = entries.slice(0, options.limit).map(({ file, diagnostic }) => {
    const severity = severityNames[(diagnostic.severity ?? 1) - 1] ?? 'error';
    const full =
      typeof diagnostic.message === 'string' ? diagnostic.message : diagnostic.message.value;
    const message = full.split('\n')[0] ?? '';
    const { line, character } = diagnostic.range.start;
    return `${options.display(file)}:${line + 1}:${character + 1} ${severity}${diagnosticCode(diagnostic)}: ${message}`;
  });
  if (entries.length > lines.length) lines.push(`… and ${entries.length - lines.length} more`);
  const counts = countBySeverity(files);
  const summary = Object.entries(counts)
    .map(([name, count]) => `${count} ${name}${count === 1 ? '' : 's'}`)
    .join(', ');
  const withProblems = files.filter((file) => file.diagnostics.length > 0).length;
  const scope =
    files.length === 1 && files[0] !== undefined
      ? options.display(files[0].path)
      : `${files.length} file${files.length === 1 ? '' : 's'} checked${options.truncatedFiles ? ' (more exist; not checked)' : ''}`;
  const incomplete = files
    .filter((file) => !file.complete)
    .map((file) => options.display(file.path));
  const footer = [
    entries.length === 0
      ? `No problems in ${scope}.`
      : `${summary} in ${withProblems} file${withProblems === 1 ? '' : 's'} (${scope}).`,
  ];
  if (incomplete.length > 0)
    footer.push(
      `The server had not finished checking ${incomplete.join(', ')}; ask again for the rest.`,
    );
  const omitted = files.reduce((sum, file) => sum + (file.omitted ?? 0), 0);
  if (omitted > 0)
    footer.push(
      `The server reported ${omitted} more diagnostic${omitted === 1 ? '' : 's'} than are kept (the most severe ${defaultPublishedDiagnosticsLimits.perFile} per file).`,
    );
  return [...lines, ...footer].join('\n');
}
