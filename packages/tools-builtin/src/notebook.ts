/**
 * Jupyter notebooks (nbformat 4): `notebook_edit` replaces, inserts or deletes a cell (by id or
 * index) and can change its type, keeping the file's JSON indentation, its trailing newline and
 * every metadata field; `renderNotebook` is what read_file shows for an `.ipynb`: the cells with
 * their outputs (text; images as images).
 */
import { randomBytes } from 'node:crypto';
import {
  composePrepareArguments,
  type DefinedTool,
  defineTool,
  renameArguments,
  ToolError,
  type ToolResult,
} from '@agent/core';
import * as z from 'zod';
import { atomicWrite } from './atomic-write.js';
import { defaultMaxEditBytes, readForEdit, staleEdit } from './edit-file.js';
import { type FileToolOptions, workspaceOf } from './file-tool-options.js';
import { errorCode, fileSystemError } from './fs-errors.js';
import { type NotebookChange, spliceNotebook } from './notebook-splice.js';
import { fileResourceKey } from './write-file.js';

export { type NotebookRenderLimits, renderNotebook } from './notebook-render.js';

type CellType = 'code' | 'markdown' | 'raw';

interface Cell {
  cell_type: CellType;
  id?: string;
  source: string | string[];
  metadata: Record<string, unknown>;
  outputs?: Output[];
  execution_count?: number | null;
  [key: string]: unknown;
}

interface Output {
  output_type: string;
  text?: string | string[];
  data?: Record<string, unknown>;
  ename?: string;
  evalue?: string;
  name?: string;
}

interface Notebook {
  nbformat: number;
  nbformat_minor: number;
  cells: Cell[];
  metadata: Record<string, unknown>;
}

/** A notebook's text parsed and checked, or why it is not a notebook we can edit. */
export function parseNotebook(text: string, shown: string): Notebook {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ToolError(
      `${shown} is not a valid notebook: its JSON does not parse (${String(error)})`,
    );
  }
  const notebook = value as Partial<Notebook>;
  if (typeof value !== 'object' || value === null || !Array.isArray(notebook.cells))
    throw new ToolError(`${shown} is not a valid notebook: it has no "cells" list`);
  if (notebook.nbformat !== 4)
    throw new ToolError(
      `${shown} is nbformat ${String(notebook.nbformat)}; only nbformat 4 notebooks are edited (convert it with jupyter nbconvert --to notebook)`,
    );
  notebook.cells.forEach((cell, index) => {
    if (
      typeof cell !== 'object' ||
      cell === null ||
      !['code', 'markdown', 'raw'].includes(cell.cell_type)
    )
      throw new ToolError(
        `${shown} is not a valid notebook: cell ${index} has no valid "cell_type"`,
      );
  });
  return notebook as Notebook;
}

/** nbformat's multiline form: lines that keep their newline, the last one without. */
function sourceLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n').map((line) => `${line}\n`);
  const last = lines.length - 1;
  lines[last] = (lines[last] as string).slice(0, -1);
  return lines[last] === '' ? lines.slice(0, -1) : lines;
}

/** The indentation the file uses (Jupyter writes 1 space), so a rewrite keeps its diff small. */
function indentationOf(text: string): string | number {
  const found = /\n([ \t]+)"/.exec(text);
  return found?.[1] ?? 1;
}

function cellFor(
  type: CellType,
  source: string,
  withId: boolean,
  metadata: Record<string, unknown> = {},
): Cell {
  const cell: Cell = { cell_type: type, source: sourceLines(source), metadata };
  if (withId) cell.id = randomBytes(4).toString('hex');
  if (type === 'code') {
    cell.execution_count = null;
    cell.outputs = [];
  }
  return cell;
}

/** A cell turned into another type: outputs only for code, everything else kept. */
function retype(cell: Cell, type: CellType): Cell {
  const { outputs: _outputs, execution_count: _count, ...rest } = cell;
  const next: Cell = { ...rest, cell_type: type };
  if (type === 'code') {
    next.execution_count = null;
    next.outputs = [];
  }
  return next;
}

/** Arguments of notebook_edit. */
export interface NotebookEditArgs {
  path: string;
  edit_mode: 'replace' | 'insert' | 'delete';
  cell_id?: string | undefined;
  cell_index?: number | undefined;
  new_source?: string | undefined;
  cell_type?: CellType | undefined;
}

/** `details` of a notebook_edit result. */
export interface NotebookEditDetails {
  path: string;
  cells: number;
  /** Index of the cell changed, inserted or deleted. */
  index: number;
}

/** The notebook_edit tool. */
export function createNotebookEditTool(
  options: FileToolOptions,
): DefinedTool<NotebookEditArgs, NotebookEditDetails> {
  const workspace = workspaceOf(options);
  return defineTool({
    name: 'notebook_edit',
    label: 'Edit notebook',
    aliases: ['NotebookEdit', 'edit_notebook'],
    // claw-code's and Claude Code's `NotebookEdit {notebook_path, cell_id, new_source, cell_type,
    // edit_mode}`, where edit_mode defaults to replace.
    prepareArguments: composePrepareArguments(renameArguments({ notebook_path: 'path' }), (raw) =>
      raw !== null && typeof raw === 'object' && !Array.isArray(raw) && !('edit_mode' in raw)
        ? { ...raw, edit_mode: 'replace' }
        : raw,
    ),
    description: [
      'Edits a Jupyter notebook (.ipynb, nbformat 4) one cell at a time: "replace" a cell\'s source (and',
      'optionally its type), "insert" a new cell after the given one (at the start without one), or',
      '"delete" it. Name the cell by cell_id or by 0-based cell_index (read_file shows both).',
      "Replacing a code cell's source clears its outputs. The file's formatting and metadata are kept.",
    ].join(' '),
    input: z.object({
      path: z.string().min(1).describe('The .ipynb file.'),
      edit_mode: z.enum(['replace', 'insert', 'delete']),
      cell_id: z.string().min(1).optional().describe('The id of the cell (nbformat 4.5+).'),
      cell_index: z.number().int().min(0).optional().describe('The 0-based index of the cell.'),
      new_source: z.string().optional().describe('The new source (replace, insert).'),
      cell_type: z
        .enum(['code', 'markdown', 'raw'])
        .optional()
        .describe('Type of the cell (insert: default code).'),
    }),
    source: 'builtin',
    policy: {
      // It reads the notebook it changes, so read rules cover it too.
      pathAccess: 'read-write',
      permission: 'workspace-write',
      resourceKey: (args) => fileResourceKey(workspace, args.path),
    },
    permissionSubjects: (args) => workspace.writeSubjects(args.path, 'notebook_edit', args),
    execute: async (args): Promise<ToolResult<NotebookEditDetails>> => {
      const real = await workspace.resolve(args.path, 'write', 'notebook_edit');
      await workspace.checkProtectedWrite(real, 'notebook_edit', args);
      const shown = workspace.display(real);
      // As edit_file reads: a FIFO the model names blocked the call for ever, a device never ended.
      const bytes = await readForEdit(workspace, real, shown, 'notebook_edit', defaultMaxEditBytes);
      const text = bytes.toString('utf8');
      const notebook = parseNotebook(text, shown);
      const cells = notebook.cells;
      const withIds = notebook.nbformat_minor >= 5;
      let index: number | undefined;
      if (args.cell_id !== undefined) {
        const matching = cells.flatMap((cell, at) => (cell.id === args.cell_id ? [at] : []));
        if (matching.length === 0)
          throw new ToolError(`${shown} has no cell with id "${args.cell_id}"`);
        // Ids should be unique (nbformat 4.5); a file where they are not must not have the first
        // of them edited in silence.
        if (matching.length > 1)
          throw new ToolError(
            `${shown} has ${matching.length} cells with id "${args.cell_id}" (cells ${matching.join(', ')}); name the cell by cell_index instead`,
          );
        index = matching[0] as number;
      } else if (args.cell_index !== undefined) {
        index = args.cell_index;
        const limit = args.edit_mode === 'insert' ? cells.length : cells.length - 1;
        if (index > limit)
          throw new ToolError(
            `${shown} has ${cellCount(cells.length)} (indexes 0 to ${cells.length - 1}); there is no cell ${index}`,
          );
      }
      let changed: number;
      if (args.edit_mode === 'insert') {
        if (args.new_source === undefined)
          throw ToolError.invalidArguments('notebook_edit', 'insert needs new_source');
        changed = index === undefined ? 0 : args.cell_id !== undefined ? index + 1 : index;
        cells.splice(changed, 0, cellFor(args.cell_type ?? 'code', args.new_source, withIds));
      } else {
        if (index === undefined)
          throw ToolError.invalidArguments(
            'notebook_edit',
            `${args.edit_mode} needs cell_id or cell_index`,
          );
        changed = index;
        if (args.edit_mode === 'delete') cells.splice(index, 1);
        else {
          if (args.new_source === undefined && args.cell_type === undefined)
            throw ToolError.invalidArguments(
              'notebook_edit',
              'replace needs new_source or cell_type',
            );
          let cell = cells[index] as Cell;
          if (args.cell_type !== undefined && args.cell_type !== cell.cell_type)
            cell = retype(cell, args.cell_type);
          if (args.new_source !== undefined) {
            cell = { ...cell, source: sourceLines(args.new_source) };
            if (cell.cell_type === 'code') {
              cell.outputs = [];
              cell.execution_count = null;
            }
          }
          cells[index] = cell;
        }
      }
      const unit = indentationOf(text);
      const change: NotebookChange = { kind: args.edit_mode, index: changed };
      // Only the changed cell is rewritten; a file the splice cannot read is written whole.
      const output =
        spliceNotebook(text, notebook, change, unit) ??
        `${JSON.stringify(notebook, null, unit)}${text.endsWith('\n') ? '\n' : ''}`;
      try {
        await atomicWrite(workspace.fs, real, output, {
          ...workspace.writeGuard(real, 'notebook_edit'),
          unchanged: bytes,
        });
      } catch (error) {
        if (ToolError.isInstance(error)) throw error;
        if (errorCode(error) === 'ESTALE') throw staleEdit(shown, 'notebook_edit');
        throw fileSystemError(error, 'write', shown, 'notebook_edit');
      }
      const verb =
        args.edit_mode === 'insert'
          ? 'Inserted'
          : args.edit_mode === 'delete'
            ? 'Deleted'
            : 'Replaced';
      return {
        content: [
          {
            type: 'text',
            text: `${verb} cell ${changed} of ${shown} (${cellCount(cells.length)} now).`,
          },
        ],
        details: { path: real, cells: cells.length, index: changed },
      };
    },
  });
}

function cellCount(count: number): string {
  return count === 1 ? '1 cell' : `${count} cells`;
}
