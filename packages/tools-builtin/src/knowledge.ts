/**
 * `knowledge`: a small knowledge base the model fills and searches — Kiro's `knowledge` tool and
 * its commands (`show`, `add`, `remove`, `clear`, `search`, `update`, `status`, `cancel`). A
 * context is text or the text files of a workspace path, cut into passages; `search` ranks
 * passages by BM25 over their words (Kiro's keyword mode; its semantic mode needs an embedding
 * model, which this package does not ship). The base lives in the tool instance, for the session:
 * nothing is written to disk. Paths are confined to the workspace like every file tool, and files
 * the permission rules keep from reading are left out when indexing.
 */
import * as path from 'node:path';
import {
  type DefinedTool,
  defineTool,
  type PermissionSubjectsResult,
  type ToolContext,
  ToolError,
} from '@agent/core';
import { readRegularFile } from '@agent/core/regular-file';
import * as z from 'zod';
import { HiddenPaths } from './hidden-paths.js';
import { isPathInside } from './path-inside.js';
import { walk } from './walk.js';
import type { Workspace } from './workspace.js';

/** Options of {@link createKnowledgeTool}. */
export interface KnowledgeToolOptions {
  /** Where paths are resolved and confined. */
  workspace: Workspace;
  /** Files indexed per add/update at most [2000]. */
  maxFiles?: number;
  /** Bytes read per file at most; larger files are skipped [1 MiB]. */
  maxFileBytes?: number;
}

/** One passage of a context. */
interface Passage {
  /** Display path of its file, when the context is a path. */
  file?: string | undefined;
  /** 1-based first line. */
  line: number;
  text: string;
  words: string[];
}

/** One entry of the knowledge base. */
interface KnowledgeContext {
  id: string;
  name: string;
  /** Real path it was indexed from, or `undefined` for text. */
  source?: string | undefined;
  passages: Passage[];
  files: number;
}

const linesPerPassage = 20;

/** Lower-case words of letters and digits (identifiers split at `_` too). */
function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** `text` cut into passages of {@link linesPerPassage} lines. */
function passagesOf(text: string, file?: string): Passage[] {
  const lines = text.split('\n');
  const passages: Passage[] = [];
  for (let start = 0; start < lines.length; start += linesPerPassage) {
    const chunk = lines.slice(start, start + linesPerPassage).join('\n');
    if (chunk.trim() === '') continue;
    passages.push({ file, line: start + 1, text: chunk, words: wordsOf(chunk) });
  }
  return passages;
}

/** BM25 scores of `passages` for `query` (k1 1.2, b 0.75), best first, zero scores dropped. */
function rank(
  passages: readonly { passage: Passage; context: KnowledgeContext }[],
  query: string,
): { passage: Passage; context: KnowledgeContext; score: number }[] {
  const terms = [...new Set(wordsOf(query))];
  if (terms.length === 0 || passages.length === 0) return [];
  const averageLength =
    passages.reduce((sum, { passage }) => sum + passage.words.length, 0) / passages.length;
  const documentFrequency = new Map<string, number>();
  for (const { passage } of passages)
    for (const term of new Set(passage.words))
      if (terms.includes(term)) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
  const scored = passages.map(({ passage, context }) => {
    const counts = new Map<string, number>();
    for (const word of passage.words)
      if (terms.includes(word)) counts.set(word, (counts.get(word) ?? 0) + 1);
    let score = 0;
    for (const [term, count] of counts) {
      const frequency = documentFrequency.get(term) ?? 0;
      const idf = Math.log(1 + (passages.length - frequency + 0.5) / (frequency + 0.5));
      score +=
        (idf * count * 2.2) /
        (count + 1.2 * (0.25 + (0.75 * passage.words.length) / averageLength));
    }
    return { passage, context, score };
  });
  return scored.filter(({ score }) => score > 0).sort((a, b) => b.score - a.score);
}

const command = z.enum(['show', 'add', 'remove', 'clear', 'search', 'update', 'status', 'cancel']);

const knowledgeInput = z.object({
  command: command.describe(
    'show: list the contexts; add: index `value` (text, or a file/directory path) as `name`; remove: by `name`, `context_id` or `path`; clear: remove all; search: find passages for `query`; update: re-index `path` into the context named by `name` or `context_id`; status/cancel: background indexing (none here).',
  ),
  name: z.string().optional().describe('Name of a context (add; remove/update may use it).'),
  value: z.string().optional().describe('Text, or a path whose files are indexed (add).'),
  context_id: z.string().optional().describe('Id of a context, as `show` lists it.'),
  path: z.string().optional().describe('Path of a context (remove) or the new content (update).'),
  query: z.string().optional().describe('Words to search for (search).'),
  limit: z.number().int().min(1).optional().describe('Passages returned at most [5].'),
  offset: z.number().int().min(0).optional().describe('Passages skipped first [0].'),
  snippet_length: z.number().int().min(20).optional().describe('Characters per passage [600].'),
  sort_by: z.string().optional().describe('Accepted for Kiro; results are by relevance.'),
  file_type: z.string().optional().describe('Only passages from files with this extension.'),
  operation_id: z.string().optional().describe('Kiro’s background operation id (cancel).'),
});

/** Arguments of the knowledge tool. */
export type KnowledgeArgs = z.infer<typeof knowledgeInput>;

function need<T>(value: T | undefined, field: string, what: string): T {
  if (value === undefined || (typeof value === 'string' && value.trim() === ''))
    throw ToolError.invalidArguments('knowledge', `${what} needs "${field}"`);
  return value;
}

/** The knowledge tool; see the module comment. */
export function createKnowledgeTool(
  options: KnowledgeToolOptions,
): DefinedTool<KnowledgeArgs, unknown> {
  const { workspace } = options;
  const maxFiles = options.maxFiles ?? 2000;
  const maxFileBytes = options.maxFileBytes ?? 1024 * 1024;
  const contexts = new Map<string, KnowledgeContext>();
  let nextId = 1;

  /** The real path `value` names when it is an existing path in the workspace; `undefined` for text. */
  async function pathOf(value: string): Promise<string | undefined> {
    if (value.includes('\n') || value.length > 4096) return undefined;
    const exists = await workspace.fs.stat(workspace.absolute(value)).then(
      () => true,
      () => false,
    );
    // A path outside the workspace is refused (denied), never stored as text.
    return exists ? workspace.resolve(value, 'read', 'knowledge') : undefined;
  }

  async function indexPath(
    real: string,
    ctx: ToolContext,
  ): Promise<{ passages: Passage[]; files: number }> {
    const hidden = new HiddenPaths(workspace, ctx.isPathDenied);
    const info = await workspace.fs.stat(real);
    const files: string[] = [];
    if (info.isDirectory()) {
      for await (const entry of walk({
        root: real,
        fs: workspace.fs,
        exclude: (entry) => hidden.excludes(entry),
        signal: ctx.signal,
      })) {
        if (!entry.isDirectory && !entry.isSymbolicLink) files.push(entry.path);
        if (files.length >= maxFiles) break;
      }
    } else if (!hidden.covered(real)) files.push(real);
    const passages: Passage[] = [];
    let indexed = 0;
    const roots = await workspace.realRoots('read');
    for (const file of files) {
      // A FIFO among them blocked the index for ever; a device, a file over the cap: left out.
      // The walk saw a regular file inside the workspace; a command in the background may have
      // swapped it (or a folder above it) for a link since. The link is not followed, and the
      // opened file must still be in the workspace and not hidden, as read_file's must.
      const outcome = await readRegularFile(file, {
        maxBytes: maxFileBytes,
        fileSystem: workspace.fs,
        followSymlinks: false,
        realPath: true,
        check: ({ realPath }) =>
          realPath !== undefined &&
          (!roots.some((root) => isPathInside(root, realPath)) || workspace.isHidden(realPath))
            ? 'it now lies outside the workspace'
            : undefined,
      });
      if (outcome.kind !== 'read') continue;
      const bytes = outcome.bytes;
      // Text files only: a NUL byte marks a binary.
      if (bytes.includes(0)) continue;
      passages.push(...passagesOf(bytes.toString('utf8'), workspace.display(file)));
      indexed++;
    }
    return { passages, files: indexed };
  }

  function find(args: KnowledgeArgs): KnowledgeContext[] {
    const matches = [...contexts.values()].filter(
      (context) =>
        (args.context_id !== undefined && context.id === args.context_id) ||
        (args.name !== undefined && context.name === args.name) ||
        (args.path !== undefined &&
          context.source !== undefined &&
          context.source === workspace.absolute(args.path)),
    );
    if (matches.length === 0)
      throw ToolError.invalidArguments(
        'knowledge',
        `no context matches; the contexts are: ${[...contexts.values()].map((context) => `${context.id} "${context.name}"`).join(', ') || 'none'}`,
      );
    return matches;
  }

  function listing(): string {
    if (contexts.size === 0) return 'The knowledge base is empty.';
    return [...contexts.values()]
      .map(
        (context) =>
          `${context.id}  ${context.name}  (${context.source === undefined ? 'text' : `${workspace.display(context.source)}, ${context.files} files`}; ${context.passages.length} passages)`,
      )
      .join('\n');
  }

  const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

  return defineTool({
    name: 'knowledge',
    label: 'Knowledge base',
    description:
      'A knowledge base for this session: index text or the files under a path, then search it ' +
      'by keywords to find the relevant passages again without rereading everything.',
    input: knowledgeInput,
    source: 'builtin',
    // It reads workspace files (subjects: their real paths) and keeps its index in memory.
    policy: { permission: 'read-only', pathAccess: 'read', exclusive: true },
    permissionSubjects: async (args): Promise<PermissionSubjectsResult> => {
      const candidate =
        args.command === 'add' ? args.value : args.command === 'update' ? args.path : undefined;
      if (candidate === undefined) return [];
      const real = await pathOf(candidate);
      return real === undefined ? [] : [real];
    },
    execute: async (args, ctx) => {
      switch (args.command) {
        case 'show':
          return text(listing());
        case 'add': {
          const name = need(args.name, 'name', 'add');
          const value = need(args.value, 'value', 'add');
          const real = await pathOf(value);
          const indexed =
            real === undefined
              ? { passages: passagesOf(value), files: 0 }
              : await indexPath(real, ctx);
          const context: KnowledgeContext = {
            id: `kb-${nextId++}`,
            name,
            source: real,
            ...indexed,
          };
          contexts.set(context.id, context);
          return text(
            `Added ${context.id} "${name}": ${real === undefined ? 'text' : `${indexed.files} files from ${workspace.display(real)}`}, ${indexed.passages.length} passages.`,
          );
        }
        case 'remove': {
          if (args.name === undefined && args.context_id === undefined && args.path === undefined)
            throw ToolError.invalidArguments(
              'knowledge',
              'remove needs "name", "context_id" or "path"',
            );
          const removed = find(args);
          for (const context of removed) contexts.delete(context.id);
          return text(
            `Removed ${removed.map((context) => `${context.id} "${context.name}"`).join(', ')}.`,
          );
        }
        case 'clear': {
          const count = contexts.size;
          contexts.clear();
          return text(`Removed all ${count} contexts.`);
        }
        case 'update': {
          const target = need(args.path, 'path', 'update');
          if (args.name === undefined && args.context_id === undefined)
            throw ToolError.invalidArguments('knowledge', 'update needs "name" or "context_id"');
          const [context] = find({ ...args, path: undefined });
          const real = await pathOf(target);
          if (context === undefined || real === undefined)
            throw new ToolError(`No such file or directory: ${target}`, {
              kind: 'not-found',
              toolName: 'knowledge',
            });
          Object.assign(context, { source: real, ...(await indexPath(real, ctx)) });
          return text(
            `Updated ${context.id} "${context.name}": ${context.files} files, ${context.passages.length} passages.`,
          );
        }
        case 'search': {
          const query = need(args.query, 'query', 'search');
          const chosen =
            args.context_id === undefined
              ? [...contexts.values()]
              : find({ context_id: args.context_id, command: 'search' });
          const extension = args.file_type?.replace(/^\*?\.?/, '.');
          const candidates = chosen.flatMap((context) =>
            context.passages
              .filter(
                (passage) =>
                  extension === undefined ||
                  (passage.file !== undefined && path.extname(passage.file) === extension),
              )
              .map((passage) => ({ passage, context })),
          );
          const ranked = rank(candidates, query);
          const offset = args.offset ?? 0;
          const shown = ranked.slice(offset, offset + (args.limit ?? 5));
          if (shown.length === 0)
            return text(
              contexts.size === 0
                ? 'The knowledge base is empty: add something first.'
                : `No passages match "${query}".`,
            );
          const length = args.snippet_length ?? 600;
          const blocks = shown.map(({ passage, context }, index) => {
            const where =
              passage.file === undefined
                ? `line ${passage.line}`
                : `${passage.file}:${passage.line}`;
            const snippet =
              passage.text.length > length ? `${passage.text.slice(0, length)}…` : passage.text;
            return `[${offset + index + 1}] ${context.name} (${context.id}) ${where}\n${snippet}`;
          });
          return text(
            `${ranked.length} passages match; showing ${offset + 1}-${offset + shown.length}.\n\n${blocks.join('\n\n')}`,
          );
        }
        case 'status':
        case 'cancel':
          // Indexing happens inside the call that asks for it: there is never anything pending.
          return text(`No background operations: indexing runs within add/update. ${listing()}`);
        default: {
          const exhaustive: never = args.command;
          return exhaustive;
        }
      }
    },
  });
}
