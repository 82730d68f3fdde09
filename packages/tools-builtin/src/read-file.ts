import {
  type DefinedTool,
  defineTool,
  detectFileKind,
  type FileKind,
  ToolError,
  type ToolResult,
} from '@agent/core';
import * as z from 'zod';
import {
  errorCode,
  type FileToolOptions,
  fileSystemError,
  workspaceOf,
} from './file-tool-options.js';
import { parseNotebook, renderNotebook } from './notebook.js';
import { decode } from './output-buffer.js';
import { seedArguments, seedToolNames } from './seed-names.js';

/** Options of {@link createReadFileTool}. */
export interface ReadFileToolOptions extends FileToolOptions {
  /** Lines returned when the call gives no `limit` [2000]. */
  defaultLimit?: number;
  /** Characters kept of each line; longer lines are cut with a marker [2000]. */
  maxLineChars?: number;
  /** Characters of numbered output per call; reading stops at the line that crosses it [100000]. */
  maxOutputChars?: number;
  /** Largest image returned as image content, in bytes [5 MiB]. */
  maxImageBytes?: number;
}

/** Arguments of the read_file tool. */
export interface ReadFileArgs {
  path: string;
  offset?: number | undefined;
  limit?: number | undefined;
}

/** `details` of a read_file result. */
export interface ReadFileDetails {
  /** The real path read. */
  path: string;
  kind: FileKind;
  sizeBytes: number;
  /** First and last line returned (1-based), when text. */
  startLine?: number;
  endLine?: number;
  /**
   * Lines in the whole file, when text and counted: past the lines returned, at most
   * {@link maxCountedRestBytes} more bytes are read to count them; beyond that it is left out.
   */
  totalLines?: number;
  /** The offset to continue from, when lines remain. */
  nextOffset?: number;
  /** True when some line was cut to `maxLineChars`. */
  linesTruncated?: boolean;
}

const chunkBytes = 256 * 1024;

/**
 * Bytes read past the last line returned just to count the file's lines [16 MiB]. A larger rest
 * is not read: the footer says lines follow and how many bytes are left (counting them would cost
 * as much as reading them).
 */
export const maxCountedRestBytes = 16 * 1024 * 1024;

/**
 * The `read_file` tool: numbered lines of a text file, streamed (a 1 GB file is never loaded to
 * return 100 lines). `offset` is the 1-based first line. Binary files are described, not dumped;
 * PNG/JPEG/GIF/WebP images come back as image content.
 */
/** Notebooks larger than this are read as plain text lines. */
const maxNotebookBytes = 20 * 1024 * 1024;

export function createReadFileTool(
  options: ReadFileToolOptions,
): DefinedTool<ReadFileArgs, ReadFileDetails> {
  const workspace = workspaceOf(options);
  const defaultLimit = options.defaultLimit ?? 2000;
  const maxLineChars = options.maxLineChars ?? 2000;
  const maxOutputChars = options.maxOutputChars ?? 100_000;
  const maxImageBytes = options.maxImageBytes ?? 5 * 1024 * 1024;
  return defineTool({
    name: 'read_file',
    aliases: seedToolNames.read_file,
    prepareArguments: seedArguments('read_file'),
    label: 'Read file',
    description: [
      'Reads a text file and returns numbered lines ("N<tab>text").',
      `"offset" is the 1-based line to start at (default 1); "limit" the number of lines (default ${defaultLimit}).`,
      `Lines longer than ${maxLineChars} characters are cut. The footer gives the total line count (for a huge file, when much remains, only that more lines follow) and the offset to continue from.`,
      'Images (PNG, JPEG, GIF, WebP) are returned as images; other binary files are only described.',
    ].join(' '),
    input: z.object({
      path: z.string().min(1).describe('File path, absolute or relative to the working directory.'),
      offset: z.number().int().min(1).optional().describe('1-based line number to start at.'),
      limit: z.number().int().min(1).optional().describe('Maximum number of lines to return.'),
    }),
    source: 'builtin',
    policy: { permission: 'read-only', pathAccess: 'read' },
    permissionSubjects: async (args) => [await workspace.resolve(args.path, 'read', 'read_file')],
    execute: async (args, ctx): Promise<ToolResult<ReadFileDetails>> => {
      const real = await workspace.resolve(args.path, 'read', 'read_file');
      const shown = workspace.display(real);
      let handle: Awaited<ReturnType<typeof workspace.fs.open>>;
      try {
        handle = await workspace.openForRead(real, 'read', 'read_file');
      } catch (error) {
        const code = errorCode(error);
        if (ToolError.isInstance(error)) throw error;
        if (code === 'ENOENT') throw new ToolError(`File not found: ${shown}`);
        if (code === 'EISDIR')
          throw new ToolError(`${shown} is a directory; use list_files to see its entries.`);
        throw fileSystemError(error, 'open', shown, 'read_file');
      }
      try {
        const stats = await handle.stat();
        if (stats.isDirectory())
          throw new ToolError(`${shown} is a directory; use list_files to see its entries.`);
        if (!stats.isFile())
          throw new ToolError(
            `${shown} is not a regular file (a FIFO, socket or device); it is not read.`,
          );
        const size = stats.size;
        const sample = Buffer.alloc(Math.min(8192, Math.max(size, 0)) || 8192);
        const { bytesRead } = await handle.read(sample, 0, sample.length, 0);
        const kind = detectFileKind(sample.subarray(0, bytesRead));
        const base: ReadFileDetails = { path: real, kind, sizeBytes: size };
        if (kind.type === 'image' && kind.mimeType !== undefined) {
          if (size > maxImageBytes) {
            return {
              content: [
                {
                  type: 'text',
                  text: `${shown} is a ${kind.format} of ${size} bytes, larger than the ${maxImageBytes}-byte limit for images; not shown.`,
                },
              ],
              details: base,
            };
          }
          const data = await handle.readFile();
          return {
            content: [
              { type: 'text', text: `${shown}: ${kind.format} (${kind.mimeType}, ${size} bytes)` },
              { type: 'image', data: data.toString('base64'), mimeType: kind.mimeType },
            ],
            details: base,
          };
        }
        if (kind.type === 'binary') {
          return {
            content: [
              {
                type: 'text',
                text: `${shown} is a binary file (${kind.format}${kind.mimeType ? `, ${kind.mimeType}` : ''}, ${size} bytes); its contents are not shown.`,
              },
            ],
            details: base,
          };
        }
        // A Jupyter notebook reads as its cells and outputs (read it with offset/limit to see the
        // raw JSON); one that does not parse as nbformat 4 is read as text.
        if (
          real.toLowerCase().endsWith('.ipynb') &&
          args.offset === undefined &&
          args.limit === undefined &&
          size <= maxNotebookBytes
        ) {
          const text = (await handle.readFile()).toString('utf8');
          let notebook: ReturnType<typeof parseNotebook> | undefined;
          try {
            notebook = parseNotebook(text, shown);
          } catch {
            notebook = undefined;
          }
          if (notebook !== undefined)
            return {
              content: renderNotebook(notebook, shown, { maxChars: maxOutputChars, maxImageBytes }),
              details: base,
            };
        }
        const offset = args.offset ?? 1;
        const limit = args.limit ?? defaultLimit;
        const read = await readLines(handle, {
          offset,
          limit,
          maxLineChars,
          maxOutputChars,
          size,
          signal: ctx.signal,
        });
        const details: ReadFileDetails = { ...base };
        if (read.restBytes === undefined) details.totalLines = read.totalLines;
        if (read.lines.length === 0) {
          if (read.totalLines === 0)
            return { content: [{ type: 'text', text: `${shown} is empty.` }], details };
          throw new ToolError(
            `offset ${offset} is past the end of ${shown}, which has ${read.totalLines} line${read.totalLines === 1 ? '' : 's'}.`,
            { kind: 'invalid-args' },
          );
        }
        const endLine = offset + read.lines.length - 1;
        details.startLine = offset;
        details.endLine = endLine;
        if (read.linesTruncated) details.linesTruncated = true;
        const body = read.lines
          .map((line, index) => `${String(offset + index).padStart(6)}\t${line}`)
          .join('\n');
        if (read.restBytes !== undefined) {
          details.nextOffset = endLine + 1;
          const footer = `[Lines ${offset}-${endLine}; more follow: ${read.restBytes.toLocaleString('en-US')} bytes after line ${endLine}, not counted; use offset ${endLine + 1} to continue]`;
          return { content: [{ type: 'text', text: `${body}\n${footer}` }], details };
        }
        let footer = `[Lines ${offset}-${endLine} of ${read.totalLines}`;
        if (endLine < read.totalLines) {
          details.nextOffset = endLine + 1;
          footer += `; use offset ${endLine + 1} to continue`;
        }
        footer += ']';
        return { content: [{ type: 'text', text: `${body}\n${footer}` }], details };
      } catch (error) {
        throw fileSystemError(error, 'read', shown, 'read_file');
      } finally {
        await handle.close();
      }
    },
  });
}

interface FileReader {
  read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }>;
}

interface ReadLinesResult {
  lines: string[];
  totalLines: number;
  linesTruncated: boolean;
  /** Set when lines were not counted to the end: bytes after the last line returned. */
  restBytes?: number;
}

/**
 * Streams the file once: skips to line `offset` counting newlines (memchr via indexOf), keeps
 * at most `limit` lines (each cut to `maxLineChars`), then counts the remaining lines.
 * Lines are split at byte 0x0A, which never occurs inside a UTF-8 sequence, so each line
 * decodes on its own; invalid bytes become U+FFFD.
 */
async function readLines(
  handle: FileReader,
  options: {
    offset: number;
    limit: number;
    maxLineChars: number;
    maxOutputChars: number;
    /** The file's size when opened. */
    size: number;
    signal: AbortSignal;
  },
): Promise<ReadLinesResult> {
  // The file as it was when opened: a log a background command keeps appending to faster than
  // it is read (`yes >> log`) had no end to reach, and the read ran until the disk filled. A file
  // that says it is empty (some file systems do) is read up to the counting cap.
  const readLimit = options.size > 0 ? options.size : maxCountedRestBytes;
  const buffer = Buffer.allocUnsafe(chunkBytes);
  const maxLineBytes = options.maxLineChars * 4 + 4;
  const lines: string[] = [];
  let outputChars = 0;
  let collecting = true;
  let linesTruncated = false;
  let lineNumber = 1; // the line the cursor is in
  let parts: Buffer[] = [];
  let partBytes = 0;
  let overLong = false;
  let position = 0;
  let lastByte = -1;
  let sawAny = false;
  /** Byte position just after the last line returned. */
  let keptEnd = 0;

  const finishLine = () => {
    let bytes = Buffer.concat(parts, partBytes);
    if (lineNumber === 1 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
      bytes = bytes.subarray(3);
    let text = decode(bytes);
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (overLong || text.length > options.maxLineChars) {
      text = `${text.slice(0, options.maxLineChars)}… [line cut at ${options.maxLineChars} characters]`;
      linesTruncated = true;
    }
    lines.push(text);
    outputChars += text.length + 8;
    if (lines.length >= options.limit || outputChars >= options.maxOutputChars) collecting = false;
    parts = [];
    partBytes = 0;
    overLong = false;
  };
  const wanted = () => collecting && lineNumber >= options.offset;
  const keep = (slice: Buffer) => {
    if (partBytes >= maxLineBytes) {
      overLong = true;
      return;
    }
    const room = maxLineBytes - partBytes;
    if (slice.length > room) overLong = true;
    const taken = slice.subarray(0, room);
    parts.push(Buffer.from(taken));
    partBytes += taken.length;
  };

  for (;;) {
    if (!collecting && options.size - keptEnd > maxCountedRestBytes) {
      return { lines, totalLines: 0, linesTruncated, restBytes: options.size - keptEnd };
    }
    options.signal.throwIfAborted();
    const chunkStart = position;
    const length = Math.min(chunkBytes, readLimit - position);
    if (length <= 0) break;
    const { bytesRead } = await handle.read(buffer, 0, length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    sawAny = true;
    lastByte = buffer[bytesRead - 1] ?? -1;
    const chunk = buffer.subarray(0, bytesRead);
    let start = 0;
    // Before `offset` and after the last line kept, only newlines are counted: a tight loop.
    if (!collecting || lineNumber < options.offset) {
      const stopAt = collecting ? options.offset : Number.POSITIVE_INFINITY;
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) {
        lineNumber++;
        start = at + 1;
        if (lineNumber >= stopAt) break;
      }
      if (!collecting || lineNumber < options.offset) continue;
    }
    while (start <= chunk.length) {
      const newline = chunk.indexOf(10, start);
      if (newline === -1) {
        if (wanted() && start < chunk.length) keep(chunk.subarray(start));
        break;
      }
      if (wanted()) {
        keep(chunk.subarray(start, newline));
        finishLine();
        keptEnd = chunkStart + newline + 1;
      }
      lineNumber++;
      start = newline + 1;
    }
  }
  // A last line without a trailing newline.
  const endsWithNewline = lastByte === 10;
  if (sawAny && !endsWithNewline) {
    if (wanted()) finishLine();
  }
  const totalLines = !sawAny ? 0 : endsWithNewline ? lineNumber - 1 : lineNumber;
  return { lines, totalLines, linesTruncated };
}
