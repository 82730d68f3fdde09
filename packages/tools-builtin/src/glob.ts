import * as path from 'node:path';
import { type DefinedTool, defineTool, ToolError, type ToolResult } from '@agent/core';
import * as z from 'zod';
import {
  errorCode,
  type FileToolOptions,
  fileSystemError,
  probeReadable,
  workspaceOf,
} from './file-tool-options.js';
import { HiddenPaths } from './hidden-paths.js';
import { invalidGlobAsToolError } from './linear-pattern.js';
import { globMatcher } from './search-worker.js';
import { seedArguments, seedToolNames } from './seed-names.js';
import { defaultSkippedDirectories, walk } from './walk.js';

/** Options of {@link createGlobTool}. */
export interface GlobToolOptions extends FileToolOptions {
  /** Entry names skipped below the searched path [defaultSkippedDirectories]. */
  skip?: readonly string[];
  /** Paths returned when the call gives no `limit` [200]. */
  defaultLimit?: number;
  /** Characters of paths one call returns, whatever its `limit`; paths past it are counted, not shown [50000]. */
  maxOutputChars?: number;
}

/** Arguments of the glob tool. */
export interface GlobArgs {
  pattern: string;
  path?: string | undefined;
  limit?: number | undefined;
  /** Deepest level matched below `path` (1: its own entries). */
  max_depth?: number | undefined;
}

/** `details` of a glob result. */
export interface GlobDetails {
  /** Real path searched. */
  root: string;
  /** Paths returned. */
  shown: number;
  /** Paths that matched in all (counting stops at 100,000). */
  total: number;
  /** Matching files (and directories) left out because permission rules cover them. */
  hiddenByRules?: { files: number; directories: number };
}

const globChars = /[*?[\]{}()!+@]/;

/** Matching paths counted at most (a huge tree cannot stall a call). */
const maxCounted = 100_000;

/**
 * The `glob` tool: file paths matching a glob (`**` crosses directories; `*.ts` is the top level
 * only), sorted by path, honouring ignore files and skipping heavy directories.
 */
export function createGlobTool(options: GlobToolOptions): DefinedTool<GlobArgs, GlobDetails> {
  const workspace = workspaceOf(options);
  const skip = options.skip ?? defaultSkippedDirectories;
  const defaultLimit = options.defaultLimit ?? 200;
  const maxOutputChars = options.maxOutputChars ?? 50_000;
  return defineTool({
    name: 'glob',
    aliases: seedToolNames.glob,
    prepareArguments: seedArguments('glob'),
    label: 'Glob',
    description:
      'Finds files whose path matches a glob such as "**/*.ts" or "src/*.{js,json}" ("**" crosses directories). Returns paths sorted by name; honours .gitignore and skips node_modules, .git and similar. Files the permission rules keep from reading are left out (the result says how many).',
    input: z.object({
      pattern: z.string().min(1).describe('Glob, relative to path.'),
      path: z
        .string()
        .optional()
        .describe('Directory to search from (default: working directory).'),
      limit: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe(`Maximum paths returned (default ${defaultLimit}).`),
      max_depth: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe('Deepest level matched below path (1: its own entries) [unlimited].'),
    }),
    source: 'builtin',
    policy: { permission: 'read-only', pathAccess: 'read' },
    permissionSubjects: async (args) => [await workspace.resolve(args.path ?? '.', 'read', 'glob')],
    execute: async (args, ctx): Promise<ToolResult<GlobDetails>> => {
      const base = await workspace.resolve(args.path ?? '.', 'read', 'glob');
      // Walk from the pattern's literal prefix (`src/lib` of `src/lib/**/*.ts`), no deeper than needed.
      const pattern = args.pattern.replace(/^\.\//, '');
      const segments = pattern.split('/');
      const literal: string[] = [];
      while (segments.length > 1 && !globChars.test(segments[0] ?? ''))
        literal.push(segments.shift() ?? '');
      const start = await workspace.resolve(path.join(base, ...literal), 'read', 'glob');
      try {
        const info = await workspace.fs.stat(start);
        if (!info.isDirectory())
          throw new ToolError(`${workspace.display(start)} is not a directory`);
        await probeReadable(workspace.fs, start);
      } catch (error) {
        if (errorCode(error) === 'ENOENT') {
          return {
            content: [{ type: 'text', text: 'No files found.' }],
            details: { root: base, shown: 0, total: 0 },
          };
        }
        throw fileSystemError(error, 'search', workspace.display(start), 'glob');
      }
      const rest = segments.join('/');
      const matcher = invalidGlobAsToolError(() => globMatcher(rest));
      const patternDepth = segments.some((segment) => segment.includes('**'))
        ? undefined
        : segments.length;
      // Kiro's max_depth counts from `path`; the walk starts below the pattern's literal prefix.
      const askedDepth = args.max_depth === undefined ? undefined : args.max_depth - literal.length;
      const maxDepth =
        askedDepth === undefined
          ? patternDepth
          : Math.min(askedDepth, patternDepth ?? Number.POSITIVE_INFINITY);
      const limit = args.limit ?? defaultLimit;
      const found: string[] = [];
      let chars = 0;
      /** True once a path did not fit in `maxOutputChars`: the ones after it are only counted. */
      let hitCharCap = false;
      let total = 0;
      const hidden = new HiddenPaths(workspace, ctx.isPathDenied);
      for await (const entry of maxDepth !== undefined && maxDepth < 1
        ? []
        : walk({
            root: start,
            fs: workspace.fs,
            skip,
            exclude: (entry) =>
              hidden.excludes(entry, entry.isDirectory || matcher(entry.relative)),
            signal: ctx.signal,
            ...(maxDepth === undefined ? {} : { maxDepth }),
          })) {
        if (entry.isDirectory || !matcher(entry.relative)) continue;
        total++;
        if (found.length < limit && !hitCharCap) {
          const shown = workspace.display(entry.path);
          // A model's limit of a million over a large tree returned megabytes in one result.
          if (chars + shown.length + 1 > maxOutputChars) hitCharCap = true;
          else {
            found.push(shown);
            chars += shown.length + 1;
          }
        }
        if (total >= maxCounted) break;
      }
      const note = hidden.note();
      const hiddenByRules =
        note === undefined
          ? {}
          : { hiddenByRules: { files: hidden.files, directories: hidden.directories } };
      if (found.length === 0) {
        return {
          content: [
            {
              type: 'text',
              text: note === undefined ? 'No files found.' : `No files found.\n${note}`,
            },
          ],
          details: { root: base, shown: 0, total, ...hiddenByRules },
        };
      }
      let text = found.join('\n');
      if (total > found.length) {
        const more = `${total >= maxCounted ? 'at least ' : ''}${total - found.length}`;
        text += hitCharCap
          ? `\n[${more} more not shown: the result stops at ${maxOutputChars} characters; narrow the pattern or the path.]`
          : `\n[${more} more not shown; raise limit or narrow the pattern.]`;
      }
      if (note !== undefined) text += `\n${note}`;
      return {
        content: [{ type: 'text', text }],
        details: { root: base, shown: found.length, total, ...hiddenByRules },
      };
    },
  });
}
