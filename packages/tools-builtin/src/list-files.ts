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
import { shownPath } from './shown-path.js';
import { defaultSkippedDirectories, type WalkEntry, walk } from './walk.js';

/** Entries a pattern listing walks at most before it stops (a huge or deep tree cannot stall it). */
const maxScannedEntries = 100_000;

/** Options of {@link createListFilesTool}. */
export interface ListFilesToolOptions extends FileToolOptions {
  /** Entry names skipped below the listed path [defaultSkippedDirectories]. */
  skip?: readonly string[];
  /** Entries listed at most; the rest is reported as truncated [1000]. */
  maxEntries?: number;
  /** Characters of listing one call returns; entries past it are reported as truncated [50000]. */
  maxOutputChars?: number;
}

/** Arguments of the list_files tool. */
export interface ListFilesArgs {
  path?: string | undefined;
  depth?: number | undefined;
  pattern?: string | undefined;
}

/** `details` of a list_files result. */
export interface ListFilesDetails {
  /** Real path listed. */
  root: string;
  entries: number;
  truncated: boolean;
  /** Files and directories left out because permission rules cover them. */
  hiddenByRules?: { files: number; directories: number };
}

/**
 * The `list_files` tool: a directory tree to a depth, honouring ignore files and skipping heavy
 * directories; `pattern` keeps the files whose name (or relative path) matches and their parents.
 */
export function createListFilesTool(
  options: ListFilesToolOptions,
): DefinedTool<ListFilesArgs, ListFilesDetails> {
  const workspace = workspaceOf(options);
  const skip = options.skip ?? defaultSkippedDirectories;
  const maxEntries = options.maxEntries ?? 1000;
  const maxOutputChars = options.maxOutputChars ?? 50_000;
  return defineTool({
    name: 'list_files',
    label: 'List files',
    aliases: seedToolNames.list_files,
    prepareArguments: seedArguments('list_files'),
    description:
      'Lists a directory as an indented tree (directories end with "/"), to "depth" levels (default 2). Honours .gitignore and skips node_modules, .git and similar. "pattern" (a glob such as "*.ts") keeps only matching files.',
    input: z.object({
      path: z.string().optional().describe('Directory to list (default: working directory).'),
      depth: z.number().int().min(1).max(20).optional().describe('Levels to descend (default 2).'),
      pattern: z
        .string()
        .optional()
        .describe('Glob the file names (or relative paths) must match.'),
    }),
    source: 'builtin',
    policy: { permission: 'read-only', pathAccess: 'read' },
    permissionSubjects: async (args) => [
      await workspace.resolve(args.path ?? '.', 'read', 'list_files'),
    ],
    execute: async (args, ctx): Promise<ToolResult<ListFilesDetails>> => {
      const root = await workspace.resolve(args.path ?? '.', 'read', 'list_files');
      const shown = workspace.display(root);
      try {
        const info = await workspace.fs.stat(root);
        if (!info.isDirectory()) throw new ToolError(`${shown} is not a directory; use read_file.`);
        await probeReadable(workspace.fs, root);
      } catch (error) {
        if (errorCode(error) === 'ENOENT') throw new ToolError(`Directory not found: ${shown}`);
        throw fileSystemError(error, 'list', shown, 'list_files');
      }
      const matcher =
        args.pattern === undefined
          ? undefined
          : invalidGlobAsToolError(() =>
              globMatcher(args.pattern as string, { basename: !args.pattern?.includes('/') }),
            );
      const entries: WalkEntry[] = [];
      let truncated = false;
      let scanned = 0;
      const hidden = new HiddenPaths(workspace, ctx.isPathDenied);
      for await (const entry of walk({
        root,
        fs: workspace.fs,
        skip,
        exclude: (entry) =>
          hidden.excludes(
            entry,
            entry.isDirectory || matcher === undefined || matcher(entry.relative),
          ),
        maxDepth: args.depth ?? 2,
        signal: ctx.signal,
      })) {
        // With a pattern the tree is walked to find matches: bound that walk too.
        if (++scanned > maxScannedEntries) {
          truncated = true;
          break;
        }
        if (matcher !== undefined && (entry.isDirectory || !matcher(entry.relative))) {
          if (entry.isDirectory) entries.push(entry);
          continue;
        }
        if (matcher === undefined && entries.length >= maxEntries) {
          truncated = true;
          break;
        }
        entries.push(entry);
      }
      let kept = entries;
      if (matcher !== undefined) {
        // Keep matching files and the directories that lead to them.
        const needed = new Set<string>();
        for (const entry of entries) {
          if (entry.isDirectory) continue;
          for (
            let dir = path.posix.dirname(entry.relative);
            dir !== '.';
            dir = path.posix.dirname(dir)
          )
            needed.add(dir);
        }
        kept = entries.filter((entry) => !entry.isDirectory || needed.has(entry.relative));
        if (kept.length > maxEntries) {
          kept = kept.slice(0, maxEntries);
          truncated = true;
        }
      }
      // 1,000 entries of 250-character names were 253,000 characters, in a result the model
      // gets whole: the listing stops at the line that would cross maxOutputChars.
      const lines: string[] = [];
      let chars = 0;
      let cutAtChars = false;
      for (const entry of kept) {
        const name = path.posix.basename(entry.relative);
        const suffix = entry.isDirectory ? '/' : entry.isSymbolicLink ? ' ->' : '';
        const line = `${'  '.repeat(entry.depth)}${shownPath(name)}${suffix}`;
        if (chars + line.length + 1 > maxOutputChars) {
          cutAtChars = true;
          truncated = true;
          break;
        }
        lines.push(line);
        chars += line.length + 1;
      }
      const header = `${shown === '.' ? '.' : shown}/`;
      let text =
        lines.length === 0
          ? `${header}\n(empty${matcher ? ' or nothing matches' : ''})`
          : `${header}\n${lines.join('\n')}`;
      if (truncated)
        text += cutAtChars
          ? `\n[Listing cut at ${maxOutputChars} characters (${lines.length} entries shown); list a subdirectory or lower depth.]`
          : scanned > maxScannedEntries
            ? `\n[Listing stopped after scanning ${maxScannedEntries} entries; list a subdirectory or lower depth.]`
            : `\n[Listing truncated at ${maxEntries} entries; list a subdirectory or lower depth.]`;
      const note = hidden.note();
      if (note !== undefined) text += `\n${note}`;
      return {
        content: [{ type: 'text', text }],
        details: {
          root,
          entries: lines.length,
          truncated,
          ...(note === undefined
            ? {}
            : { hiddenByRules: { files: hidden.files, directories: hidden.directories } }),
        },
      };
    },
  });
}
