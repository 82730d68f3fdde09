import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { Position, TextEdit, WorkspaceEdit } from 'vscode-languageserver-protocol';
import { LspError } from './errors.js';
import { isPathInside, pathOfUri, readFileInside, realPathOf } from './paths.js';

/** One file's change: its text before and after. */
export interface FileChange {
  /** Absolute path. */
  path: string;
  before: string;
  after: string;
}

/** Offsets of each line's first character in `text` (lines end at `\n`; a `\r` before it stays in the line). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) starts.push(at + 1);
  return starts;
}

function offsetOf(text: string, starts: readonly number[], position: Position): number {
  const start = starts[position.line];
  if (start === undefined) return text.length;
  const next = starts[position.line + 1];
  let end = next === undefined ? text.length : next - 1;
  if (end > start && text[end - 1] === '\r') end -= 1;
  return Math.min(start + position.character, end);
}

/** `text` with LSP text edits applied (all positions refer to the original text, as LSP says). */
export function applyTextEdits(text: string, edits: readonly TextEdit[]): string {
  const starts = lineStarts(text);
  const spans = edits
    .map((edit, index) => ({
      start: offsetOf(text, starts, edit.range.start),
      end: offsetOf(text, starts, edit.range.end),
      newText: edit.newText,
      index,
    }))
    // Last first, so earlier offsets stay valid; equal starts keep the server's order.
    .sort((a, b) => b.start - a.start || b.index - a.index);
  let result = text;
  for (const span of spans)
    result = result.slice(0, span.start) + span.newText + result.slice(span.end);
  return result;
}

/** The text edits of a `WorkspaceEdit` by absolute path, and the operations that are not text edits. */
export function textEditsByFile(edit: WorkspaceEdit): {
  edits: Map<string, TextEdit[]>;
  unsupported: string[];
} {
  const edits = new Map<string, TextEdit[]>();
  const unsupported: string[] = [];
  const add = (uri: string, textEdits: readonly TextEdit[]) => {
    const file = pathOfUri(uri);
    if (file === undefined) {
      unsupported.push(`an edit of ${uri} (not a file)`);
      return;
    }
    const list = edits.get(file) ?? [];
    list.push(...textEdits);
    edits.set(file, list);
  };
  if (edit.documentChanges !== undefined) {
    for (const change of edit.documentChanges) {
      if ('textDocument' in change) add(change.textDocument.uri, change.edits as TextEdit[]);
      else unsupported.push(`${change.kind} of ${'uri' in change ? change.uri : change.oldUri}`);
    }
  } else if (edit.changes !== undefined) {
    for (const [uri, textEdits] of Object.entries(edit.changes)) add(uri, textEdits);
  }
  return { edits, unsupported };
}

async function exists(entry: string): Promise<boolean> {
  return (await fs.lstat(entry).catch(() => undefined)) !== undefined;
}

/**
 * The git directory `file` lies in, below the root holding it: a folder named `.git` (or a `.git`
 * file), or one git takes for a git directory (a bare repository: `HEAD` beside `objects`, `refs`
 * or `commondir`). The edit comes from the language server — the repository's own, run sandboxed,
 * where `.git` is read-only — and is written by this process: a rename must not be its way there.
 */
async function gitDirectoryHolding(
  file: string,
  roots: readonly string[],
): Promise<string | undefined> {
  const real = await realPathOf(file);
  const root = roots.find((candidate) => isPathInside(candidate, real));
  if (root === undefined) return undefined;
  for (let entry = real; isPathInside(root, entry); entry = path.dirname(entry)) {
    if (path.basename(entry) === '.git') return entry;
    if (await exists(path.join(entry, 'HEAD')))
      for (const marker of ['objects', 'refs', 'commondir'])
        if (await exists(path.join(entry, marker))) return entry;
    if (entry === root) break;
  }
  return undefined;
}

/**
 * Reads each file (only inside `roots`, real paths: see `readFileInside`) and applies its edits;
 * files whose text does not change are left out. Throws `LspError` for a file it may not read.
 */
export async function fileChangesOf(
  edits: ReadonlyMap<string, readonly TextEdit[]>,
  roots: readonly string[],
): Promise<FileChange[]> {
  const changes: FileChange[] = [];
  for (const [file, textEdits] of [...edits.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const gitDirectory = await gitDirectoryHolding(file, roots);
    if (gitDirectory !== undefined)
      throw new LspError(
        `The rename would change ${file}, inside a repository's git directory (${gitDirectory}): git runs what is written there with the next git command, outside any sandbox; it is refused.`,
        { code: 'request-failed' },
      );
    // Kept by real path: what is judged (the permission question, the protected places) and
    // what is written are the same file, whatever links the server's path went through.
    const real = await realPathOf(file);
    const before = await readFileInside(real, roots);
    if (before === undefined)
      throw new LspError(
        `The rename would change ${file}, which is not a file of the workspace; it is refused.`,
        {
          code: 'request-failed',
        },
      );
    const after = applyTextEdits(before, textEdits);
    if (after !== before) changes.push({ path: real, before, after });
  }
  return changes;
}

/** A unified diff of the changes (`--- a/x`, `+++ b/x`, 3 lines of context), paths as `display` shows them. */
export async function unifiedDiff(
  changes: readonly FileChange[],
  display: (file: string) => string,
): Promise<string> {
  // Imported when a rename is previewed, not when the tools load.
  const { createTwoFilesPatch } = await import('diff');
  return changes
    .map((change) => {
      const shown = display(change.path).split(path.sep).join('/');
      const patch = createTwoFilesPatch(
        `a/${shown}`,
        `b/${shown}`,
        change.before,
        change.after,
        undefined,
        undefined,
        {
          context: 3,
        },
      );
      // jsdiff starts with a line of "=" signs; a plain unified diff does not.
      return patch.replace(/^=+\n/, '');
    })
    .join('');
}

/** SHA-256 of a text, to tell whether a file changed since an edit was previewed. */
export function digestOf(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Writes `text` to `file` (a real path) atomically: a temporary file beside it, renamed over it,
 * keeping the file's permission bits. Refuses (`LspError`, nothing written) when `file` is no
 * longer its own real path, or the temporary file did not land in its folder: a folder above it
 * swapped for a link (a sandboxed background command can make one at any moment) must not carry
 * the write out of the workspace or into a place judged otherwise (`.git`, `.vscode`).
 */
export async function writeFileAtomically(file: string, text: string): Promise<void> {
  const moved = () =>
    new LspError(
      `${file} now leads elsewhere than when the rename was previewed (a folder was replaced by a link); nothing more was written. Preview it again.`,
      { code: 'request-failed' },
    );
  if ((await realPathOf(file)) !== file) throw moved();
  const stats = await fs.stat(file);
  const folder = path.dirname(file);
  const temporary = path.join(
    folder,
    `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`,
  );
  // Where the temporary file was made, by its descriptor (the folder may have been swapped for a
  // link meanwhile): removed from there, and by name, when the write does not go through.
  const made: string[] = [];
  try {
    const handle = await fs.open(temporary, 'wx', stats.mode & 0o777);
    made.push(temporary);
    try {
      const landed = await fs.realpath(`/proc/self/fd/${handle.fd}`).catch(() => temporary);
      made.push(landed);
      if (path.dirname(landed) !== folder) throw moved();
      await handle.writeFile(text);
      await handle.chmod(stats.mode & 0o7777);
    } finally {
      await handle.close();
    }
    if ((await realPathOf(folder)) !== folder) throw moved();
    await fs.rename(temporary, file);
  } catch (error) {
    for (const entry of made) await fs.rm(entry, { force: true });
    throw error;
  }
}
