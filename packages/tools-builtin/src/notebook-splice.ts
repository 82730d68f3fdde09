/**
 * notebook_edit's write: only the cell that changed is rewritten; every other byte of the file
 * stays as it was. Re-serialising the whole notebook turned `1.0` into `1`, `3.10` into `3.1`,
 * `12345678901234567890` into `12345678901234567000`, `"\u00e9"` into `"é"`, and reflowed
 * metadata an editor or a tool had written its own way — in cells the edit never touched.
 *
 * The scan below only finds where the elements of the top-level `"cells"` array begin and end
 * (strings skipped with their escapes, brackets counted); the values themselves are JSON.parse's,
 * and the spliced text is parsed again and compared with the notebook it must be, so a file the
 * scan misreads is written whole instead (as before), never wrong.
 */

/** The edit to write: which cell of the edited `cells` changed, appeared or went. */
export type NotebookChange =
  | { kind: 'replace'; index: number }
  | { kind: 'insert'; index: number }
  | { kind: 'delete'; index: number };

interface CellsLayout {
  /** Offset of the array's `[`. */
  open: number;
  /** Offset of each cell object: its `{` and one past its `}`. */
  cells: { start: number; end: number }[];
}

/** One past the closing quote of the string that starts at `start`. */
function stringEnd(text: string, start: number): number {
  for (let index = start + 1; index < text.length; index++) {
    const char = text[index];
    if (char === '\\') index++;
    else if (char === '"') return index + 1;
  }
  return -1;
}

/** Where the top-level `"cells"` array and its objects are, or undefined when unsure. */
function cellsLayout(text: string): CellsLayout | undefined {
  let depth = 0;
  let key: string | undefined;
  let layout: CellsLayout | undefined;
  let inCells = false;
  let start = -1;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === '"') {
      const end = stringEnd(text, index);
      if (end < 0) return undefined;
      if (depth === 1 && /^\s*:/.test(text.slice(end, end + 64))) key = text.slice(index, end);
      index = end - 1;
    } else if (char === '{' || char === '[') {
      if (inCells && depth === 2) {
        if (char !== '{') return undefined;
        start = index;
      }
      depth++;
      if (char === '[' && depth === 2 && key === '"cells"') {
        // JSON.parse keeps the last of two "cells" keys; a file that has two is written whole.
        if (layout !== undefined) return undefined;
        layout = { open: index, cells: [] };
        inCells = true;
      }
    } else if (char === '}' || char === ']') {
      depth--;
      if (inCells && depth === 2 && char === '}') layout?.cells.push({ start, end: index + 1 });
      if (inCells && depth === 1) inCells = false;
    } else if (char === ',' && depth === 1) key = undefined;
  }
  return depth === 0 ? layout : undefined;
}

/** `cell` as the file writes its cells: indented like them, or on one line in a minified file. */
function cellText(cell: unknown, text: string, at: number, unit: string | number): string {
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  const lead = text.slice(lineStart, at);
  if (lineStart === 0 || !/^[ \t]*$/.test(lead)) return JSON.stringify(cell);
  const newline = text[lineStart - 2] === '\r' ? '\r\n' : '\n';
  return JSON.stringify(cell, null, unit).replace(/\n/g, `${newline}${lead}`);
}

/**
 * The file's text with `change` made to it alone, or undefined when it cannot be done that way
 * (the caller then writes the notebook whole). `cells` is the notebook's cells after the change.
 */
export function spliceNotebook(
  text: string,
  notebook: { cells: readonly unknown[] },
  change: NotebookChange,
  unit: string | number,
): string | undefined {
  const layout = cellsLayout(text);
  if (layout === undefined) return undefined;
  const { cells } = layout;
  const { index } = change;
  let spliced: string;
  if (change.kind === 'replace') {
    const span = cells[index];
    if (span === undefined) return undefined;
    spliced = `${text.slice(0, span.start)}${cellText(notebook.cells[index], text, span.start, unit)}${text.slice(span.end)}`;
  } else if (change.kind === 'delete') {
    const span = cells[index];
    if (span === undefined) return undefined;
    const previous = cells[index - 1];
    const next = cells[index + 1];
    // The cell goes with the separator before it (the first: with the one after it).
    if (previous !== undefined) spliced = `${text.slice(0, previous.end)}${text.slice(span.end)}`;
    else if (next !== undefined) spliced = `${text.slice(0, span.start)}${text.slice(next.start)}`;
    else {
      const close = text.indexOf(']', span.end);
      if (close < 0) return undefined;
      spliced = `${text.slice(0, layout.open + 1)}${text.slice(close)}`;
    }
  } else {
    const before = cells[index];
    const last = cells[cells.length - 1];
    const cell = notebook.cells[index];
    if (before !== undefined) {
      // What separates this cell from the `[` or `,` before it separates the new one too.
      const delimiter = index === 0 ? layout.open : text.lastIndexOf(',', before.start);
      const separator = text.slice(delimiter + 1, before.start);
      spliced = `${text.slice(0, before.start)}${cellText(cell, text, before.start, unit)},${separator}${text.slice(before.start)}`;
    } else if (last !== undefined && index === cells.length) {
      const delimiter = cells.length === 1 ? layout.open : text.lastIndexOf(',', last.start);
      const separator = text.slice(delimiter + 1, last.start);
      spliced = `${text.slice(0, last.end)},${separator}${cellText(cell, text, last.start, unit)}${text.slice(last.end)}`;
    } else return undefined;
  }
  // The spliced file must read as exactly the notebook meant; otherwise it is written whole.
  try {
    return JSON.stringify(JSON.parse(spliced)) === JSON.stringify(notebook) ? spliced : undefined;
  } catch {
    return undefined;
  }
}
