import * as fs from 'node:fs/promises';
import {
  type AnyAgentTool,
  type DefinedTool,
  defineTool,
  type ToolContext,
  ToolError,
  type ToolResult,
} from '@agent/core';
import type { Position } from 'vscode-languageserver-protocol';
import * as z from 'zod';
import { LspError } from './errors.js';
import {
  countBySeverity,
  formatDiagnostics,
  formatDocumentSymbols,
  formatLocations,
  formatWorkspaceSymbols,
  hoverText,
  rankWorkspaceSymbols,
} from './format.js';
import { LspWorkspace, type LspWorkspaceOptions } from './lsp-workspace.js';
import { pathOfUri, readRegularFile } from './paths.js';
import { LocatorError, positionOf, type SymbolLocator } from './positions.js';

/**
 * Whether results in this file are left out: permission rules keep readers from it
 * (`ctx.isPathDenied`). Left out silently — a count of references or symbols found in a covered
 * file would tell what it contains.
 */
function coveredUri(ctx: ToolContext, uri: string): boolean {
  const file = pathOfUri(uri);
  return file !== undefined && ctx.isPathDenied?.(file, 'read') === true;
}

/** `items` without those in files the permission rules cover for reading. */
function visible<T>(ctx: ToolContext, items: readonly T[], uriOf: (item: T) => string): T[] {
  if (ctx.isPathDenied === undefined) return [...items];
  return items.filter((item) => !coveredUri(ctx, uriOf(item)));
}

/** Options of {@link createLspTools}: a workspace to share, or the options to make one. */
export type LspToolsOptions = { workspace: LspWorkspace } | LspWorkspaceOptions;

/** Lines of locations, symbols or diagnostics shown per call [200]. */
const maxListed = 200;

/** The wire names of the tools {@link createLspTools} makes. */
export const lspToolNames = [
  'lsp_diagnostics',
  'lsp_definition',
  'lsp_references',
  'lsp_hover',
  'lsp_document_symbols',
  'lsp_workspace_symbols',
  'lsp_rename',
  'lsp_apply_rename',
] as const;

const pathField = z
  .string()
  .min(1)
  .describe('Source file, relative to the working directory or absolute.');

const locatorFields = {
  path: pathField,
  line: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      '1-based line where the symbol is. Without it, the first occurrence of "symbol" in the file is used.',
    ),
  symbol: z
    .string()
    .min(1)
    .optional()
    .describe('The identifier to look up as written in the file, e.g. "parseConfig".'),
  column: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('1-based column, when "symbol" is not given.'),
  occurrence: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      'Which occurrence of "symbol" on the line (or in the file when no line), 1-based; default 1.',
    ),
};

const locatorHelp =
  'Point at a symbol with "path" plus "symbol" (its name) and, best, "line" (1-based); or "line" and "column".';

/**
 * The code-intelligence tools over real language servers (typescript-language-server for
 * TS/JS, pyright for Python): diagnostics, definition, references, hover, document and
 * workspace symbols (read-only), and rename as a previewed diff (read-only) applied by
 * `lsp_apply_rename` (workspace-write). Permission subjects are the files' real paths; a path
 * outside the workspace roots is denied. Close the workspace (or `await using`) to stop the servers.
 */
export function createLspTools(options: LspToolsOptions): AnyAgentTool[] {
  const workspace = 'workspace' in options ? options.workspace : new LspWorkspace(options);
  const tools: AnyAgentTool[] = [
    diagnosticsTool(workspace),
    definitionTool(workspace),
    referencesTool(workspace),
    hoverTool(workspace),
    documentSymbolsTool(workspace),
    workspaceSymbolsTool(workspace),
    renameTool(workspace),
    applyRenameTool(workspace),
  ] as AnyAgentTool[];
  for (const tool of tools)
    tool.keywords = ['lsp', 'language server', ...(keywords[tool.name] ?? [])];
  return tools;
}

/** Extra words `tool_search` finds each tool by. */
const keywords: Record<string, readonly string[]> = {
  lsp_diagnostics: ['type check', 'errors', 'warnings', 'lint', 'compile'],
  lsp_definition: ['go to definition', 'declaration', 'navigate'],
  lsp_references: ['find usages', 'callers', 'references'],
  lsp_hover: ['type', 'signature', 'documentation', 'quick info'],
  lsp_document_symbols: ['outline', 'structure', 'symbols'],
  lsp_workspace_symbols: ['find symbol', 'class', 'function', 'go to symbol'],
  lsp_rename: ['rename', 'refactor', 'preview'],
  lsp_apply_rename: ['rename', 'refactor', 'apply'],
};

/** The real path of a file argument: `denied` outside the roots, `not-found` when missing. */
async function sourceFile(
  workspace: LspWorkspace,
  input: string,
  toolName: string,
): Promise<string> {
  const real = await workspace.confine(input);
  if (real === undefined)
    throw new ToolError(
      `Permission denied: ${input} is outside the workspace (${workspace.roots.join(', ')})`,
      {
        kind: 'denied',
        toolName,
      },
    );
  const stats = await fs.stat(real).catch(() => undefined);
  if (stats === undefined)
    throw new ToolError(`File not found: ${input}`, { kind: 'not-found', toolName });
  if (!stats.isFile())
    throw new ToolError(`${input} is not a file`, { kind: 'invalid-args', toolName });
  return real;
}

async function subjectOf(
  workspace: LspWorkspace,
  input: string,
  toolName: string,
): Promise<string[]> {
  const real = await workspace.confine(input);
  if (real === undefined)
    throw new ToolError(
      `Permission denied: ${input} is outside the workspace (${workspace.roots.join(', ')})`,
      {
        kind: 'denied',
        toolName,
      },
    );
  return [real];
}

/** Runs a tool body, turning LspError and LocatorError into ToolErrors the model can act on. */
async function run<T>(toolName: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (ToolError.isInstance(error)) throw error;
    if (error instanceof LocatorError)
      throw new ToolError(`Invalid arguments: ${error.message}`, {
        kind: 'invalid-args',
        toolName,
        cause: error,
      });
    if (LspError.isInstance(error))
      throw new ToolError(error.message, {
        kind: error.code === 'cancelled' ? 'cancelled' : 'failed',
        toolName,
        cause: error,
      });
    throw error;
  }
}

/** Tells the user a call waits for a server start (seconds on a large project). */
function reportStart(workspace: LspWorkspace, file: string, ctx: ToolContext): void {
  if (workspace.isServerRunning(file)) return;
  const language = workspace.configFor(file)?.language;
  if (language !== undefined) ctx.onProgress(`Starting the ${language} language server…`);
}

/** Largest file searched for a symbol's position (bytes). */
const maxLocatorFileBytes = 64 * 1024 * 1024;

async function positionIn(file: string, locator: SymbolLocator): Promise<Position> {
  // Checked a regular file just before; swapped for a FIFO since, the read must not block for ever.
  const text = await readRegularFile(file, maxLocatorFileBytes + 1);
  if (text === undefined || text.length > maxLocatorFileBytes)
    throw new LocatorError(`${file} is not a regular file of at most ${maxLocatorFileBytes} bytes`);
  return positionOf(text, locator);
}

const text = <T>(value: string, details: T): ToolResult<T> => ({
  content: [{ type: 'text', text: value }],
  details,
});

function diagnosticsTool(workspace: LspWorkspace) {
  const name = 'lsp_diagnostics';
  return defineTool({
    name,
    label: 'Diagnostics',
    description:
      'Type errors, warnings and lint hints from the language server (TypeScript/JavaScript, Python) for one file, or for the workspace when "path" is left out. Reads the files as they are on disk now. Output: "path:line:column severity code: message" lines and a summary.',
    input: z.object({
      path: pathField.optional().describe('The file to check; leave out to check the workspace.'),
      language: z
        .string()
        .optional()
        .describe(
          'Only for the workspace: "typescript" or "python"; default every language with a server.',
        ),
      max_files: z
        .number()
        .int()
        .min(1)
        .max(2000)
        .optional()
        .describe('Only for the workspace: files checked at most; default 200.'),
    }),
    source: 'lsp',
    policy: { permission: 'read-only', parallelSafePerTurn: true, pathAccess: 'read' },
    permissionSubjects: async (args) =>
      args.path === undefined ? await workspace.realRoots() : subjectOf(workspace, args.path, name),
    execute: (args, ctx) =>
      run(name, async () => {
        const display = (file: string) => workspace.display(file);
        if (args.path !== undefined) {
          const file = await sourceFile(workspace, args.path, name);
          reportStart(workspace, file, ctx);
          const result = await workspace.diagnostics(file, ctx.signal);
          return text(formatDiagnostics([result], { display, limit: maxListed }), {
            files: 1,
            counts: countBySeverity([result]),
          });
        }
        const result = await workspace.workspaceDiagnostics({
          ...(args.language === undefined ? {} : { language: args.language }),
          ...(args.max_files === undefined ? {} : { maxFiles: args.max_files }),
          signal: ctx.signal,
        });
        const files = result.files.filter(
          (entry) => ctx.isPathDenied?.(entry.path, 'read') !== true,
        );
        return text(
          formatDiagnostics(files, {
            display,
            limit: maxListed,
            truncatedFiles: result.truncated,
          }),
          { files: files.length, counts: countBySeverity(files) },
        );
      }),
  });
}

function definitionTool(workspace: LspWorkspace) {
  const name = 'lsp_definition';
  return defineTool({
    name,
    label: 'Go to definition',
    description: `Where a symbol is defined, from the language server (TypeScript/JavaScript, Python). ${locatorHelp} Output: "path:line:column  source line" per definition.`,
    input: z.object(locatorFields),
    source: 'lsp',
    policy: { permission: 'read-only', parallelSafePerTurn: true, pathAccess: 'read' },
    permissionSubjects: (args) => subjectOf(workspace, args.path, name),
    execute: (args, ctx) =>
      run(name, async () => {
        const file = await sourceFile(workspace, args.path, name);
        reportStart(workspace, file, ctx);
        const position = await positionIn(file, args);
        const locations = visible(
          ctx,
          await workspace.definition(file, position, ctx.signal),
          (location) => location.uri,
        );
        if (locations.length === 0) return text('No definition found.', { count: 0 });
        const body = await formatLocations(locations, {
          display: (target) => workspace.display(target),
          limit: maxListed,
          roots: await workspace.realRoots(),
        });
        return text(body, { count: locations.length });
      }),
  });
}

function referencesTool(workspace: LspWorkspace) {
  const name = 'lsp_references';
  return defineTool({
    name,
    label: 'Find references',
    description: `Every reference to a symbol across the project, from the language server (TypeScript/JavaScript, Python). ${locatorHelp} Output: a count, then "path:line:column  source line" per reference.`,
    input: z.object({
      ...locatorFields,
      include_declaration: z
        .boolean()
        .optional()
        .describe('Include the declaration itself; default true.'),
    }),
    source: 'lsp',
    policy: { permission: 'read-only', parallelSafePerTurn: true, pathAccess: 'read' },
    permissionSubjects: (args) => subjectOf(workspace, args.path, name),
    execute: (args, ctx) =>
      run(name, async () => {
        const file = await sourceFile(workspace, args.path, name);
        reportStart(workspace, file, ctx);
        const position = await positionIn(file, args);
        const locations = visible(
          ctx,
          await workspace.references(file, position, {
            includeDeclaration: args.include_declaration ?? true,
            signal: ctx.signal,
          }),
          (location) => location.uri,
        );
        if (locations.length === 0) return text('No references found.', { count: 0 });
        const files = new Set(locations.map((location) => location.uri)).size;
        const body = await formatLocations(locations, {
          display: (target) => workspace.display(target),
          limit: maxListed,
          roots: await workspace.realRoots(),
        });
        return text(
          `${locations.length} reference${locations.length === 1 ? '' : 's'} in ${files} file${files === 1 ? '' : 's'}:\n${body}`,
          { count: locations.length, files },
        );
      }),
  });
}

function hoverTool(workspace: LspWorkspace) {
  const name = 'lsp_hover';
  return defineTool({
    name,
    label: 'Hover',
    description: `The type, signature and documentation of a symbol, as an editor shows on hover (TypeScript/JavaScript, Python). ${locatorHelp}`,
    input: z.object(locatorFields),
    source: 'lsp',
    policy: { permission: 'read-only', parallelSafePerTurn: true, pathAccess: 'read' },
    permissionSubjects: (args) => subjectOf(workspace, args.path, name),
    execute: (args, ctx) =>
      run(name, async () => {
        const file = await sourceFile(workspace, args.path, name);
        reportStart(workspace, file, ctx);
        const position = await positionIn(file, args);
        const hover = await workspace.hover(file, position, ctx.signal);
        const body = hover === null ? '' : hoverText(hover);
        return text(body === '' ? 'No information at this position.' : body, {
          found: body !== '',
        });
      }),
  });
}

function documentSymbolsTool(workspace: LspWorkspace) {
  const name = 'lsp_document_symbols';
  return defineTool({
    name,
    label: 'Document symbols',
    description:
      'An outline of a source file from the language server (TypeScript/JavaScript, Python): one line per class, function, method, variable…, "kind name  lines" (1-based), members indented under their parent.',
    input: z.object({ path: pathField }),
    source: 'lsp',
    policy: { permission: 'read-only', parallelSafePerTurn: true, pathAccess: 'read' },
    permissionSubjects: (args) => subjectOf(workspace, args.path, name),
    execute: (args, ctx) =>
      run(name, async () => {
        const file = await sourceFile(workspace, args.path, name);
        reportStart(workspace, file, ctx);
        const symbols = await workspace.documentSymbols(file, ctx.signal);
        if (symbols.length === 0)
          return text(`No symbols in ${workspace.display(file)}.`, { count: 0 });
        return text(formatDocumentSymbols(symbols, maxListed), { count: symbols.length });
      }),
  });
}

function workspaceSymbolsTool(workspace: LspWorkspace) {
  const name = 'lsp_workspace_symbols';
  return defineTool({
    name,
    label: 'Workspace symbols',
    description:
      'Finds classes, functions, methods and other symbols by name across the project, from the language servers (TypeScript/JavaScript, Python); fuzzy matching as in an editor\'s "go to symbol". Output: "kind name  path:line".',
    input: z.object({
      query: z.string().min(1).describe('The name or part of it.'),
      language: z
        .string()
        .optional()
        .describe('"typescript" or "python"; default every language with a server and files here.'),
      limit: z
        .number()
        .int()
        .min(1)
        .max(500)
        .optional()
        .describe('Symbols shown at most; default 50.'),
    }),
    source: 'lsp',
    policy: { permission: 'read-only', parallelSafePerTurn: true, pathAccess: 'read' },
    permissionSubjects: () => workspace.realRoots(),
    execute: (args, ctx) =>
      run(name, async () => {
        const symbols = visible(
          ctx,
          await workspace.workspaceSymbols(args.query, {
            ...(args.language === undefined ? {} : { language: args.language }),
            signal: ctx.signal,
            onProgress: (text) => ctx.onProgress(text),
          }),
          (symbol) => symbol.location.uri,
        );
        if (symbols.length === 0) return text(`No symbols match "${args.query}".`, { count: 0 });
        return text(
          formatWorkspaceSymbols(rankWorkspaceSymbols(symbols, args.query), {
            display: (file) => workspace.display(file),
            limit: args.limit ?? 50,
          }),
          { count: symbols.length },
        );
      }),
  });
}

function renameTool(workspace: LspWorkspace) {
  const name = 'lsp_rename';
  return defineTool({
    name,
    label: 'Rename (preview)',
    description: `Renames a symbol everywhere it is used, as the language server computes it (TypeScript/JavaScript, Python), WITHOUT writing: returns the change as a unified diff and an id. To write it, call lsp_apply_rename with that id. ${locatorHelp}`,
    input: z.object({
      ...locatorFields,
      new_name: z.string().min(1).describe('The new name.'),
    }),
    source: 'lsp',
    policy: { permission: 'read-only', pathAccess: 'read' },
    permissionSubjects: (args) => subjectOf(workspace, args.path, name),
    execute: (args, ctx) =>
      run(name, async () => {
        const file = await sourceFile(workspace, args.path, name);
        reportStart(workspace, file, ctx);
        const position = await positionIn(file, args);
        const preview = await workspace.previewRename(file, position, args.new_name, ctx.signal);
        // The diff quotes every file it changes: one the rules keep from reading is not shown.
        if (preview.files.some((target) => ctx.isPathDenied?.(target, 'read') === true)) {
          throw new ToolError(
            'This rename would change files the permission rules keep from reading; it is not previewed.',
            { kind: 'denied', toolName: name },
          );
        }
        const files = preview.files.length;
        const lines = [
          `Preview ${preview.id}: ${files} file${files === 1 ? '' : 's'} would change. Nothing was written; call lsp_apply_rename with {"id": "${preview.id}"} to write it.`,
        ];
        if (preview.unsupported.length > 0)
          lines.push(`Not included (not text edits): ${preview.unsupported.join('; ')}.`);
        lines.push(preview.diff.trimEnd());
        return text(lines.join('\n'), {
          id: preview.id,
          files: preview.files.map((target) => workspace.display(target)),
          diff: preview.diff,
        });
      }),
  });
}

function applyRenameTool(
  workspace: LspWorkspace,
): DefinedTool<{ id: string }, { files: string[] }> {
  const name = 'lsp_apply_rename';
  return defineTool({
    name,
    label: 'Apply rename',
    description:
      'Writes a rename previewed by lsp_rename (by its id). Refused when a file changed since the preview; then preview again.',
    input: z.object({
      id: z.string().min(1).describe('The id lsp_rename returned, e.g. "rename-1".'),
    }),
    source: 'lsp',
    policy: { permission: 'workspace-write', exclusive: true, pathAccess: 'write' },
    // The files the previewed edit writes; an unknown id touches nothing (execute reports it).
    // A protected place among them (a `.vscode` task, a git hook in the tree) asks for full-access.
    permissionSubjects: (args) => workspace.writeSubjects(args.id),
    execute: (args) =>
      run(name, async () => {
        const { files } = await workspace.applyEdit(args.id);
        const shown = files.map((file) => workspace.display(file));
        return text(`Applied ${args.id}: wrote ${shown.join(', ')}.`, { files: shown });
      }),
  });
}
