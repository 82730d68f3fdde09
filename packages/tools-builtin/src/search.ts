import { type DefinedTool, defineTool, ToolError, type ToolResult } from '@agent/core';
import * as z from 'zod';
import {
  errorCode,
  type FileToolOptions,
  fileSystemError,
  probeReadable,
  workspaceOf,
} from './file-tool-options.js';
import { countCoveredFiles, HiddenPaths } from './hidden-paths.js';
import { invalidGlobAsToolError } from './linear-pattern.js';
import {
  createRipgrepEngine,
  createTypeScriptEngine,
  findRipgrep,
  type SearchEngine,
  type SearchFileResult,
  type SearchOutputMode,
  type SearchQuery,
} from './search-engines.js';
import { includeMatcher } from './search-worker.js';
import { seedArguments, seedToolNames } from './seed-names.js';
import { defaultSkippedDirectories } from './walk.js';
import type { Workspace } from './workspace.js';

/** Longest line shown, in characters; longer lines are cut with a marker. */
export const maxSearchLineChars = 500;

/** Options of {@link createSearchTool}. */
export interface SearchToolOptions extends FileToolOptions {
  /**
   * Which engine runs searches: `auto` uses ripgrep when `rg` is on PATH, else TypeScript;
   * or pass an engine (e.g. `createTypeScriptEngine(...)`) [auto].
   */
  engine?: 'auto' | 'ripgrep' | 'typescript' | SearchEngine;
  /** Path of `rg` for the ripgrep engine [found on PATH]. */
  ripgrepPath?: string;
  /** Entry names skipped below the searched path [defaultSkippedDirectories]. */
  skip?: readonly string[];
  /** Honour .gitignore/.ignore/.rgignore files, the searched path's parents included [true]. */
  respectIgnoreFiles?: boolean;
  /** Output lines (entries) returned when the call gives no `head_limit` [250]. */
  defaultHeadLimit?: number;
  /** Characters of output per call; the rest is reported as truncated [50000]. */
  maxOutputChars?: number;
}

/** Arguments of the search tool. */
export interface SearchArgs {
  pattern: string;
  path?: string | undefined;
  include?: string | undefined;
  case_sensitive?: boolean | undefined;
  output_mode?: SearchOutputMode | undefined;
  context?: number | undefined;
  head_limit?: number | undefined;
  offset?: number | undefined;
}

/** `details` of a search result. */
export interface SearchDetails {
  engine: string;
  /** Real path searched. */
  root: string;
  /** Entries shown (lines, files or counts, depending on the mode). */
  shown: number;
  /** True when more entries existed past `offset + head_limit` or the character cap. */
  truncated: boolean;
  filesWithMatches: number;
  /** Files (and directories) below the searched path left out because permission rules cover them. */
  hiddenByRules?: { files: number; directories: number };
}

/** Chooses the engine: an injected one, ripgrep when found, else TypeScript. */
export function resolveSearchEngine(
  options: Pick<SearchToolOptions, 'engine' | 'ripgrepPath'>,
  workspace: Workspace,
): SearchEngine {
  const engine = options.engine ?? 'auto';
  if (typeof engine === 'object') return engine;
  if (engine === 'typescript') return createTypeScriptEngine({ fs: workspace.fs });
  const rgPath = options.ripgrepPath ?? findRipgrep(process.env.PATH, workspace.roots);
  if (rgPath !== undefined) return createRipgrepEngine({ rgPath });
  if (engine === 'ripgrep') throw new ToolError('ripgrep (rg) was asked for but is not on PATH');
  return createTypeScriptEngine({ fs: workspace.fs });
}

function cutLine(text: string): string {
  if (text.length <= maxSearchLineChars) return text;
  return `${text.slice(0, maxSearchLineChars)}… [${text.length - maxSearchLineChars} more characters]`;
}

/** The output lines of one file's result, as both engines are shown. */
export function formatFileResult(
  result: SearchFileResult,
  mode: SearchOutputMode,
  shownPath: string,
): string[] {
  if (mode === 'files_with_matches') return [shownPath];
  if (mode === 'count') return [`${shownPath}:${result.count}`];
  const lines: string[] = [];
  let previous: number | undefined;
  for (const line of result.lines) {
    if (previous !== undefined && line.line > previous + 1) lines.push('--');
    lines.push(
      `${shownPath}${line.match ? ':' : '-'}${line.line}${line.match ? ':' : '-'}${cutLine(line.text)}`,
    );
    previous = line.line;
  }
  return lines;
}

/**
 * The `search` tool (grep): a regular expression over file contents, honouring ignore files and
 * skipping binaries and heavy directories. Uses ripgrep when it is on PATH and a TypeScript
 * engine otherwise; output is the same either way.
 */
export function createSearchTool(
  options: SearchToolOptions,
): DefinedTool<SearchArgs, SearchDetails> {
  const workspace = workspaceOf(options);
  const skip = options.skip ?? defaultSkippedDirectories;
  const defaultHeadLimit = options.defaultHeadLimit ?? 250;
  const maxOutputChars = options.maxOutputChars ?? 50_000;
  let engine: SearchEngine | undefined;
  return defineTool({
    name: 'search',
    label: 'Search',
    aliases: seedToolNames.search,
    prepareArguments: seedArguments('search'),
    description: [
      'Searches file contents for a regular expression (ripgrep syntax) and returns matching lines as',
      '"path:line:text" (context lines as "path-line-text"), or the matching files, or per-file counts.',
      'Honours .gitignore, skips binary files and heavy directories such as node_modules and .git.',
      'Files the permission rules keep from reading are left out (the result says how many).',
      `Lines are cut at ${maxSearchLineChars} characters. Use head_limit and offset to page through many results.`,
    ].join(' '),
    input: z.object({
      pattern: z.string().min(1).describe('Regular expression to search for.'),
      path: z
        .string()
        .optional()
        .describe('File or directory to search (default: working directory).'),
      include: z
        .string()
        .optional()
        .describe('Glob the files must match, e.g. "*.ts" or "src/**/*.{ts,tsx}".'),
      case_sensitive: z.boolean().optional().describe('Match case exactly (default true).'),
      output_mode: z
        .enum(['content', 'files_with_matches', 'count'])
        .optional()
        .describe(
          'content: matching lines (default); files_with_matches: paths; count: matches per file.',
        ),
      context: z
        .number()
        .int()
        .min(0)
        .max(20)
        .optional()
        .describe('Lines of context around each match (content mode).'),
      head_limit: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe(`Maximum output entries (default ${defaultHeadLimit}).`),
      offset: z
        .number()
        .int()
        .min(0)
        .optional()
        .describe('Output entries to skip first (for paging).'),
    }),
    source: 'builtin',
    policy: { permission: 'read-only', pathAccess: 'read' },
    permissionSubjects: async (args) => [
      await workspace.resolve(args.path ?? '.', 'read', 'search'),
    ],
    execute: async (args, ctx): Promise<ToolResult<SearchDetails>> => {
      const root = await workspace.resolve(args.path ?? '.', 'read', 'search');
      let isDirectory = false;
      try {
        const info = await workspace.fs.stat(root);
        isDirectory = info.isDirectory();
        // A FIFO given as the path blocked both engines for ever (a device never ends).
        if (!info.isFile() && !isDirectory)
          throw new ToolError(
            `${workspace.display(root)} is not a regular file or a directory (a FIFO, socket or device); it is not searched.`,
            { toolName: 'search' },
          );
        await probeReadable(workspace.fs, root);
      } catch (error) {
        if (ToolError.isInstance(error)) throw error;
        if (errorCode(error) === 'ENOENT')
          throw new ToolError(`Path not found: ${workspace.display(root)}`);
        throw fileSystemError(error, 'search', workspace.display(root), 'search');
      }
      engine ??= resolveSearchEngine(options, workspace);
      const mode = args.output_mode ?? 'content';
      const query: SearchQuery = {
        root,
        pattern: args.pattern,
        caseSensitive: args.case_sensitive ?? true,
        context: mode === 'content' ? (args.context ?? 0) : 0,
        mode,
        skip,
        respectIgnoreFiles: options.respectIgnoreFiles ?? true,
        ...(args.include === undefined ? {} : { include: args.include }),
      };
      // A glob RE2 cannot run is the model's to fix, said before the search starts.
      invalidGlobAsToolError(() => includeMatcher(query.include));
      const offset = args.offset ?? 0;
      const headLimit = args.head_limit ?? defaultHeadLimit;
      const controller = new AbortController();
      const onAbort = () => controller.abort(ctx.signal.reason);
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      // Covered files are counted by name alongside the search (see countCoveredFiles: never from
      // which of them match), and left out of the results.
      const hidden = new HiddenPaths(workspace, ctx.isPathDenied);
      const counting =
        hidden.active && isDirectory
          ? countCoveredFiles({
              root,
              workspace,
              hidden,
              skip,
              respectIgnoreFiles: query.respectIgnoreFiles ?? true,
              include: includeMatcher(query.include),
              signal: ctx.signal,
            })
          : Promise.resolve();
      const output: string[] = [];
      let seen = 0;
      let chars = 0;
      let truncated = false;
      let files = 0;
      let hitCharCap = false;
      try {
        outer: for await (const result of engine.search(query, controller.signal)) {
          // Another session's private files (a root holding the temporary directory walks into
          // them), and files the rules cover: left out.
          if (hidden.excludesFound(root, result.path)) continue;
          files++;
          const lines = formatFileResult(result, mode, workspace.display(result.path));
          if (mode === 'content' && query.context > 0 && files > 1) lines.unshift('--');
          for (const line of lines) {
            if (seen < offset) {
              seen++;
              continue;
            }
            if (output.length >= headLimit || chars + line.length > maxOutputChars) {
              truncated = true;
              hitCharCap = output.length < headLimit;
              break outer;
            }
            if (output.length === 0 && line === '--') {
              seen++;
              continue;
            }
            output.push(line);
            chars += line.length + 1;
            seen++;
          }
        }
      } finally {
        ctx.signal.removeEventListener('abort', onAbort);
        controller.abort();
      }
      await counting.catch(() => undefined);
      if (ctx.signal.aborted) throw ToolError.cancelled('search');
      const details: SearchDetails = {
        engine: engine.name,
        root,
        shown: output.length,
        truncated,
        filesWithMatches: files,
      };
      const note = hidden.note();
      if (note !== undefined)
        details.hiddenByRules = { files: hidden.files, directories: hidden.directories };
      const withNote = (text: string) => (note === undefined ? text : `${text}\n${note}`);
      if (output.length === 0) {
        const text =
          offset > 0 && seen > 0
            ? `No results past offset ${offset} (${seen} in all).`
            : 'No matches found.';
        return { content: [{ type: 'text', text: withNote(text) }], details };
      }
      let text = output.join('\n');
      if (truncated) {
        const why = hitCharCap ? `the ${maxOutputChars}-character cap` : `head_limit ${headLimit}`;
        text += `\n[Results truncated at ${why}; use offset ${offset + output.length} to see more.]`;
      }
      return { content: [{ type: 'text', text: withNote(text) }], details };
    },
  });
}
