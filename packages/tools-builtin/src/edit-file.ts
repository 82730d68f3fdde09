import {
  type DefinedTool,
  defineTool,
  detectFileKind,
  ResourceLocks,
  ToolError,
  type ToolResult,
} from '@agent/core';
import * as z from 'zod';
import { atomicWrite } from './atomic-write.js';
import {
  errorCode,
  type FileToolOptions,
  fileSystemError,
  workspaceOf,
} from './file-tool-options.js';
import { seedArguments, seedToolNames } from './seed-names.js';
import type { Workspace } from './workspace.js';
import { fileResourceKey } from './write-file.js';

const bom = Buffer.from([0xef, 0xbb, 0xbf]);
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A file's text split into what edits see (LF only) and what must be kept (BOM, CRLFs). */
interface EditableText {
  hasBom: boolean;
  /** The text with every CRLF as LF. */
  view: string;
  /** View indices of the `\n`s that were `\r\n`, ascending. */
  crlf: number[];
}

/** What {@link applyEdit} produced. */
export interface EditOutcome {
  bytes: Buffer;
  /** 1-based line (in the old file) of each replaced occurrence. */
  lines: number[];
}

function toEditable(bytes: Buffer, shown: string): EditableText {
  const hasBom = bytes.subarray(0, 3).equals(bom);
  const body = hasBom ? bytes.subarray(3) : bytes;
  const kind = detectFileKind(body.subarray(0, 8192));
  if (kind.type !== 'text') {
    throw new ToolError(`${shown} is a binary file (${kind.format}); it cannot be edited as text.`);
  }
  let text: string;
  try {
    text = strictUtf8.decode(body);
  } catch {
    throw new ToolError(
      `${shown} is not valid UTF-8; refusing to edit it so that its bytes are not changed.`,
    );
  }
  const crlf: number[] = [];
  let view = '';
  let from = 0;
  let removed = 0;
  for (;;) {
    const at = text.indexOf('\r\n', from);
    if (at === -1) break;
    view += text.slice(from, at);
    crlf.push(at - removed);
    removed++;
    from = at + 1; // keep the \n
  }
  view += text.slice(from);
  return { hasBom, view, crlf };
}

function countBelow(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((sorted[mid] ?? 0) < value) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** 1-based line of each index of `ascending`, in one pass over the text. */
function linesOf(view: string, ascending: readonly number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let newline = view.indexOf('\n');
  for (const index of ascending) {
    while (newline !== -1 && newline < index) {
      line++;
      newline = view.indexOf('\n', newline + 1);
    }
    lines.push(line);
  }
  return lines;
}

/** Line numbers for a message: the first 20, then how many more. */
function listLines(lines: readonly number[]): string {
  if (lines.length <= 20) return lines.join(', ');
  return `${lines.slice(0, 20).join(', ')} and ${lines.length - 20} more`;
}

function bigrams(text: string): Map<string, number> {
  const grams = new Map<string, number>();
  const normalised = text.toLowerCase().replace(/\s+/g, ' ');
  for (let i = 0; i < normalised.length - 1; i++) {
    const gram = normalised.slice(i, i + 2);
    grams.set(gram, (grams.get(gram) ?? 0) + 1);
  }
  return grams;
}

function similarity(a: Map<string, number>, aSize: number, b: string): number {
  const other = bigrams(b.slice(0, 500));
  let shared = 0;
  let bSize = 0;
  for (const [gram, count] of other) {
    bSize += count;
    shared += Math.min(count, a.get(gram) ?? 0);
  }
  return aSize + bSize === 0 ? 0 : (2 * shared) / (aSize + bSize);
}

/** The "not found" message: whitespace hints and the closest lines of the file. */
function notFoundMessage(view: string, needle: string, shown: string): string {
  const squash = (text: string) => text.replace(/\s+/g, ' ').trim();
  let message = `old_string was not found in ${shown}.`;
  if (squash(needle) !== '' && squash(view).includes(squash(needle))) {
    message += ' It matches when whitespace is ignored: check indentation, tabs and line breaks.';
  }
  const probe = needle.split('\n').find((line) => line.trim() !== '') ?? needle;
  const probeGrams = bigrams(probe.trim().slice(0, 500));
  let probeSize = 0;
  for (const count of probeGrams.values()) probeSize += count;
  const lines = view.split('\n');
  const scored: { line: number; text: string; score: number }[] = [];
  for (const [index, text] of lines.entries()) {
    if (text.trim() === '') continue;
    const score = similarity(probeGrams, probeSize, text.trim());
    if (score >= 0.4) scored.push({ line: index + 1, text, score });
  }
  scored.sort((a, b) => b.score - a.score || a.line - b.line);
  const best = scored.slice(0, 3);
  if (best.length > 0) {
    message += ` Closest lines to ${JSON.stringify(probe.trim().slice(0, 120))}:\n${best
      .map((c) => `${String(c.line).padStart(6)}\t${c.text.slice(0, 200)}`)
      .join('\n')}`;
  }
  message += '\nRead the file again and copy old_string exactly.';
  return message;
}

/**
 * Replaces `oldString` with `newString` in a file's bytes. Matching ignores the difference
 * between CRLF and LF; every line ending outside the replaced text is kept byte for byte, and
 * new lines take the endings of the lines they replace (else the ending at the edit site).
 * A UTF-8 BOM is kept. Throws a `ToolError` for zero matches (with the closest lines), several
 * or overlapping matches (with their line numbers), or identical strings.
 */
export function applyEdit(
  bytes: Buffer,
  edit: { oldString: string; newString: string; replaceAll?: boolean },
  shown = 'the file',
): EditOutcome {
  if (edit.oldString === '') {
    throw new ToolError('old_string is empty; use write_file to create or overwrite a file.', {
      kind: 'invalid-args',
    });
  }
  const needle = edit.oldString.replace(/\r\n/g, '\n');
  const replacement = edit.newString.replace(/\r\n/g, '\n');
  if (edit.oldString === edit.newString || needle === replacement) {
    throw new ToolError('old_string and new_string are identical; there is nothing to change.', {
      kind: 'invalid-args',
    });
  }
  const file = toEditable(bytes, shown);
  const { view, crlf } = file;
  const matches: number[] = [];
  // Every match (overlapping ones too) when replacing all; enough to report otherwise.
  const wanted = edit.replaceAll === true ? Number.POSITIVE_INFINITY : 1_000;
  for (let at = view.indexOf(needle); at !== -1; at = view.indexOf(needle, at + 1)) {
    matches.push(at);
    if (matches.length >= wanted) break;
  }
  if (matches.length === 0) throw new ToolError(notFoundMessage(view, needle, shown));
  const lines = linesOf(view, matches);
  const overlapping = matches.some((at, i) => i > 0 && at < (matches[i - 1] ?? 0) + needle.length);
  if (matches.length > 1 && edit.replaceAll !== true) {
    const count = matches.length >= wanted ? `at least ${wanted}` : `${matches.length}`;
    throw new ToolError(
      `old_string matches ${count} times in ${shown} (at lines ${listLines(lines)})${overlapping ? ', some overlapping' : ''}. Add surrounding lines to make it unique, or set replace_all to replace every occurrence.`,
    );
  }
  if (overlapping) {
    throw new ToolError(
      `old_string matches overlapping text in ${shown} (at lines ${listLines(lines)}); replace_all cannot decide which to replace. Make old_string more specific.`,
    );
  }
  const crlfCount = crlf.length;
  const lfCount = (view.match(/\n/g)?.length ?? 0) - crlfCount;
  const dominant = crlfCount > lfCount ? '\r\n' : '\n';
  const crlfSet = new Set(crlf);
  const endingAt = (viewIndex: number) => (crlfSet.has(viewIndex) ? '\r\n' : '\n');
  const toText = (viewIndex: number) => viewIndex + countBelow(crlf, viewIndex);
  const text = view.replace(/\n/g, (_match, offset: number) => endingAt(offset));

  let output = '';
  let cursor = 0;
  // Linear in the file however many matches (replace_all of a short string on a long line):
  // newlines are only looked for when the replacement has some, from a cursor that only advances.
  const needleHasNewline = needle.includes('\n');
  const replacementHasNewline = replacement.includes('\n');
  let nextNewline = -2; // the first '\n' at or after the last `end` (-1: none); -2: not looked yet
  for (const at of matches) {
    const end = at + needle.length;
    let replaced = replacement;
    if (replacementHasNewline) {
      const endings: string[] = [];
      if (needleHasNewline) {
        for (let i = view.indexOf('\n', at); i !== -1 && i < end; i = view.indexOf('\n', i + 1))
          endings.push(endingAt(i));
      }
      if (nextNewline === -2 || (nextNewline !== -1 && nextNewline < end))
        nextNewline = view.indexOf('\n', end);
      const siteEnding = endings.at(-1) ?? (nextNewline === -1 ? dominant : endingAt(nextNewline));
      let index = 0;
      replaced = replacement.replace(/\n/g, () => endings[index++] ?? siteEnding);
    }
    output += text.slice(cursor, toText(at)) + replaced;
    cursor = toText(end);
  }
  output += text.slice(cursor);
  const encoded = Buffer.from(output, 'utf8');
  return { bytes: file.hasBom ? Buffer.concat([bom, encoded]) : encoded, lines };
}

/** Atomically writes an edited file; the temp file's real path is re-checked against the write roots. */
async function writeEdited(
  workspace: Workspace,
  real: string,
  data: string | Uint8Array,
  shown: string,
  toolName: string,
  before?: Uint8Array,
): ReturnType<typeof atomicWrite> {
  try {
    return await atomicWrite(workspace.fs, real, data, {
      ...workspace.writeGuard(real, toolName),
      ...(before === undefined ? {} : { unchanged: before }),
    });
  } catch (error) {
    if (errorCode(error) === 'EISDIR') throw new ToolError(`${shown} is a directory`);
    if (errorCode(error) === 'ESTALE') throw staleEdit(shown, toolName);
    throw fileSystemError(error, 'write', shown, toolName);
  }
}

/** The file changed on disk between reading it for an edit and writing the edit: nothing written. */
export function staleEdit(shown: string, toolName: string): ToolError {
  return new ToolError(
    `${shown} changed on disk while it was being edited (another process wrote it); the edit was not written, so that change is kept. Read the file again and redo the edit.`,
    { toolName },
  );
}

/** Default {@link EditFileToolOptions.maxEditBytes}: 50 MiB. */
export const defaultMaxEditBytes = 50 * 1024 * 1024;

/** `1234567` → `1.2 MiB (1,234,567 bytes)`. */
function formatSize(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const exact = `${bytes.toLocaleString('en-US')} bytes`;
  return unit === 0 ? exact : `${value.toFixed(1)} ${units[unit]} (${exact})`;
}

function tooLarge(shown: string, size: number, maxBytes: number, toolName: string): ToolError {
  return new ToolError(
    `${shown} is ${formatSize(size)}, larger than the ${formatSize(maxBytes)} limit for editing (maxEditBytes); it was not read or changed. Use bash (e.g. sed) for a targeted change, or write_file to replace it.`,
    { toolName },
  );
}

/** Edits of one file by this process run one at a time, even outside an agent loop. */
const editLocks = new ResourceLocks();

/**
 * Reads a regular file for editing, opened the race-checked way (see `Workspace.openForRead`): a
 * missing file, a directory, a FIFO or device, a file over `maxBytes` are `ToolError`s naming it.
 */
export async function readForEdit(
  workspace: Workspace,
  real: string,
  shown: string,
  toolName: string,
  maxBytes: number,
): Promise<Buffer> {
  let handle: Awaited<ReturnType<Workspace['openForRead']>>;
  try {
    handle = await workspace.openForRead(real, 'write', toolName);
  } catch (error) {
    if (ToolError.isInstance(error)) throw error;
    if (errorCode(error) === 'ENOENT')
      throw new ToolError(`File not found: ${shown}. Use write_file to create it.`);
    throw fileSystemError(error, 'open', shown, toolName);
  }
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) throw new ToolError(`${shown} is a directory`);
    if (!stats.isFile())
      throw new ToolError(`${shown} is not a regular file (a FIFO, socket or device)`);
    // Checked before reading: the whole file is held in memory (several times) while editing.
    if (stats.size > maxBytes) throw tooLarge(shown, stats.size, maxBytes, toolName);
    const bytes = await handle.readFile();
    // It may have grown since the stat.
    if (bytes.length > maxBytes) throw tooLarge(shown, bytes.length, maxBytes, toolName);
    return bytes;
  } catch (error) {
    throw fileSystemError(error, 'read', shown, toolName);
  } finally {
    await handle.close();
  }
}

/** Options of {@link createEditFileTool} and {@link createTextEditorTool}. */
export interface EditFileToolOptions extends FileToolOptions {
  /** Largest file, in bytes, that is edited; larger files are refused before being read [50 MiB]. */
  maxEditBytes?: number;
}

/** Arguments of the edit_file tool. */
export interface EditFileArgs {
  path: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean | undefined;
}

/** `details` of an edit_file or text_editor result. */
export interface EditFileDetails {
  /** The real path edited. */
  path: string;
  /** 1-based lines of the replaced occurrences (or of the insertion). */
  lines: number[];
  created?: boolean;
}

/**
 * The `edit_file` tool: exact string replacement, one match unless `replace_all`. CRLF files
 * match LF `old_string`s and keep every line ending; a BOM is kept; writes are atomic and edits
 * of one real file are serialised (`policy.resourceKey`).
 */
export function createEditFileTool(
  options: EditFileToolOptions,
): DefinedTool<EditFileArgs, EditFileDetails> {
  const workspace = workspaceOf(options);
  const maxEditBytes = options.maxEditBytes ?? defaultMaxEditBytes;
  return defineTool({
    name: 'edit_file',
    aliases: seedToolNames.edit_file,
    prepareArguments: seedArguments('edit_file'),
    label: 'Edit file',
    description: [
      'Replaces old_string with new_string in a file. old_string must match exactly one place',
      '(include surrounding lines to make it unique) unless replace_all is true.',
      'Line endings (CRLF/LF) and a BOM are preserved. Read the file first.',
    ].join(' '),
    input: z.object({
      path: z.string().min(1).describe('File path, absolute or relative to the working directory.'),
      old_string: z.string().describe('The exact text to replace.'),
      new_string: z.string().describe('The text to put in its place (must differ).'),
      replace_all: z.boolean().optional().describe('Replace every occurrence (default false).'),
    }),
    source: 'builtin',
    policy: {
      // It reads the file it changes (a near match is quoted back), so read rules cover it too.
      pathAccess: 'read-write',
      permission: 'workspace-write',
      resourceKey: (args) => fileResourceKey(workspace, args.path),
    },
    permissionSubjects: (args) => workspace.writeSubjects(args.path, 'edit_file', args),
    execute: async (args, ctx): Promise<ToolResult<EditFileDetails>> => {
      const real = await workspace.resolve(args.path, 'write', 'edit_file');
      await workspace.checkProtectedWrite(real, 'edit_file', args);
      const shown = workspace.display(real);
      const release = await editLocks.acquire(real, ctx.signal);
      try {
        const before = await readForEdit(workspace, real, shown, 'edit_file', maxEditBytes);
        const outcome = applyEdit(
          before,
          {
            oldString: args.old_string,
            newString: args.new_string,
            ...(args.replace_all === undefined ? {} : { replaceAll: args.replace_all }),
          },
          shown,
        );
        await writeEdited(workspace, real, outcome.bytes, shown, 'edit_file', before);
        const count = outcome.lines.length;
        return {
          content: [
            {
              type: 'text',
              text: `Edited ${shown}: replaced ${count} occurrence${count === 1 ? '' : 's'} (line${count === 1 ? '' : 's'} ${listLines(outcome.lines)}).`,
            },
          ],
          details: { path: real, lines: outcome.lines },
        };
      } finally {
        release();
      }
    },
  });
}

/** Arguments of the text_editor tool (Kiro-style commands). */
export interface TextEditorArgs {
  command: 'create' | 'str_replace' | 'insert' | 'append';
  path: string;
  file_text?: string | undefined;
  old_str?: string | undefined;
  new_str?: string | undefined;
  insert_line?: number | undefined;
}

const textEditorInput = z
  .object({
    command: z
      .enum(['create', 'str_replace', 'insert', 'append'])
      .describe('create a file, str_replace text, insert after a line, or append to the end.'),
    path: z.string().min(1).describe('File path, absolute or relative to the working directory.'),
    file_text: z.string().optional().describe('create: the whole file content.'),
    old_str: z.string().optional().describe('str_replace: the exact text to replace (unique).'),
    new_str: z
      .string()
      .optional()
      .describe('str_replace: the replacement; insert/append: the text to add.'),
    insert_line: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('insert: the 1-based line after which to insert (0 = at the start).'),
  })
  .superRefine((args, context) => {
    const need = (field: keyof TextEditorArgs) => {
      if (args[field] === undefined)
        context.addIssue({
          code: 'custom',
          path: [field],
          message: `required for ${args.command}`,
        });
    };
    if (args.command === 'create') need('file_text');
    if (args.command === 'str_replace') {
      need('old_str');
      need('new_str');
    }
    if (args.command === 'insert') {
      need('insert_line');
      need('new_str');
    }
    if (args.command === 'append') need('new_str');
  });

/**
 * The `text_editor` tool: Kiro-style `create | str_replace | insert | append` commands over the
 * same confined, atomic, serialised, line-ending-preserving machinery as `edit_file`.
 */
export function createTextEditorTool(
  options: EditFileToolOptions,
): DefinedTool<TextEditorArgs, EditFileDetails> {
  const workspace = workspaceOf(options);
  const maxEditBytes = options.maxEditBytes ?? defaultMaxEditBytes;
  return defineTool({
    name: 'text_editor',
    label: 'Text editor',
    description: [
      'Edits files with a command: create {path, file_text}; str_replace {path, old_str, new_str}',
      '(old_str must be unique); insert {path, insert_line, new_str} inserts after 1-based line',
      'insert_line (0 = start); append {path, new_str} adds lines to the end (starting a new line, ending with one).',
    ].join(' '),
    input: textEditorInput,
    aliases: ['fs_edit'],
    source: 'builtin',
    policy: {
      // It reads the file it changes (a near match is quoted back), so read rules cover it too.
      pathAccess: 'read-write',
      permission: 'workspace-write',
      resourceKey: (args) => fileResourceKey(workspace, args.path),
    },
    permissionSubjects: (args) => workspace.writeSubjects(args.path, 'text_editor', args),
    execute: async (args, ctx): Promise<ToolResult<EditFileDetails>> => {
      const real = await workspace.resolve(args.path, 'write', 'text_editor');
      await workspace.checkProtectedWrite(real, 'text_editor', args);
      const shown = workspace.display(real);
      const release = await editLocks.acquire(real, ctx.signal);
      try {
        if (args.command === 'create') {
          const outcome = await writeEdited(
            workspace,
            real,
            args.file_text ?? '',
            shown,
            'text_editor',
          );
          return {
            content: [
              { type: 'text', text: `${outcome.created ? 'Created' : 'Overwrote'} ${shown}.` },
            ],
            details: { path: real, lines: [], created: outcome.created },
          };
        }
        const before = await readForEdit(workspace, real, shown, 'text_editor', maxEditBytes);
        if (args.command === 'str_replace') {
          const outcome = applyEdit(
            before,
            { oldString: args.old_str ?? '', newString: args.new_str ?? '' },
            shown,
          );
          await writeEdited(workspace, real, outcome.bytes, shown, 'text_editor', before);
          return {
            content: [
              { type: 'text', text: `Edited ${shown} at line ${outcome.lines.join(', ')}.` },
            ],
            details: { path: real, lines: outcome.lines },
          };
        }
        const file = toEditable(before, shown);
        const crlfCount = file.crlf.length;
        const lfCount = (file.view.match(/\n/g)?.length ?? 0) - crlfCount;
        const ending = crlfCount > lfCount ? '\r\n' : '\n';
        const addition = (args.new_str ?? '').replace(/\r\n/g, '\n');
        const text = before.subarray(file.hasBom ? 3 : 0).toString('utf8');
        let output: string;
        let line: number;
        if (args.command === 'append') {
          const needsBreak = text.length > 0 && !text.endsWith('\n');
          // As Kiro's fs_write does: the appended text ends the file with a line ending.
          const appended = addition.replace(/\n/g, ending);
          output = `${text}${needsBreak ? ending : ''}${appended}${appended.endsWith(ending) || appended === '' ? '' : ending}`;
          line = (file.view.match(/\n/g)?.length ?? 0) + (needsBreak ? 2 : 1);
        } else {
          const lines = file.view.split('\n');
          const total = file.view.endsWith('\n') ? lines.length - 1 : lines.length;
          const after = args.insert_line ?? 0;
          if (after > total) {
            throw new ToolError(
              `insert_line ${after} is past the end of ${shown}, which has ${total} lines.`,
              { kind: 'invalid-args' },
            );
          }
          // Byte offset in the original text just after line `after`.
          let offset = 0;
          for (let i = 0; i < after; i++) {
            const next = text.indexOf('\n', offset);
            offset = next === -1 ? text.length : next + 1;
          }
          let inserted = addition.replace(/\n/g, ending);
          if (!inserted.endsWith(ending)) inserted += ending;
          const prefix = text.slice(0, offset);
          const needsBreak = prefix.length > 0 && !prefix.endsWith('\n');
          output = `${prefix}${needsBreak ? ending : ''}${inserted}${text.slice(offset)}`;
          line = after + 1;
        }
        const encoded = Buffer.from(output, 'utf8');
        await writeEdited(
          workspace,
          real,
          file.hasBom ? Buffer.concat([bom, encoded]) : encoded,
          shown,
          'text_editor',
          before,
        );
        return {
          content: [
            {
              type: 'text',
              text: `${args.command === 'append' ? 'Appended to' : 'Inserted into'} ${shown} at line ${line}.`,
            },
          ],
          details: { path: real, lines: [line] },
        };
      } finally {
        release();
      }
    },
  });
}
