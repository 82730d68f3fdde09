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
 * Writes `text` to `file` (a real path), keeping the file's permission bits. Refuses (`LspError`,
 * nothing written) when `file` now leads elsewhere: a folder above it swapped for a link (a
 * sandboxed background command can make one at any moment) must not carry the write out of the
 * workspace or into a place judged otherwise (`.git`, `.vscode`).
 *
 * On Linux the file is opened (no link followed at its name) and its descriptor checked for where
 * it is before anything is written: the file judged is the file written, whatever is swapped
 * after. A temporary file renamed over it could not be: rename(2) looks up its two paths one after
 * the other, and a folder swapped between the two lookups moved the new file over the one of the
 * same name outside (a window of microseconds, which a racer under load can hit). The
 * write is in place, so a crash midway leaves the file partly written. Elsewhere (no `/proc`) a
 * temporary file beside it is renamed over it, the folder checked just before.
 */
export async function writeEditedFile(file: string, text: string): Promise<void> {
  if (process.platform === 'linux') return writeThroughCheckedDescriptor(file, text);
  return writeByRename(file, text);
}

function movedError(file: string): LspError {
  return new LspError(
    `${file} now leads elsewhere than when the rename was previewed (a folder was replaced by a link); nothing more was written. Preview it again.`,
    { code: 'request-failed' },
  );
}

/** The in-place write of {@link writeEditedFile}, through a descriptor checked for where it is. */
async function writeThroughCheckedDescriptor(file: string, text: string): Promise<void> {
  const handle = await fs
    .open(file, fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW)
    .catch((error: NodeJS.ErrnoException) => {
      // A link put in the file's place, or the file gone: not the file judged.
      if (error.code === 'ELOOP' || error.code === 'ENOENT') throw movedError(file);
      throw error;
    });
  try {
    // Where the open file is now (the kernel's own path of it): the inside file, or not written.
    const landed = await fs.realpath(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
    if (landed !== file) throw movedError(file);
    // Written in place, a file with other names would change under each of them (one may lie
    // where the edit was never judged): refused.
    if ((await handle.stat()).nlink > 1)
      throw new LspError(
        `${file} has other names (hard links); the rename does not write it in place. Nothing more was written.`,
        { code: 'request-failed' },
      );
    const bytes = Buffer.from(text, 'utf8');
    await handle.truncate(0);
    await handle.write(bytes, 0, bytes.length, 0);
  } finally {
    await handle.close();
  }
}

/** The write of {@link writeEditedFile} where `/proc` cannot tell where a descriptor is. */
async function writeByRename(file: string, text: string): Promise<void> {
  const moved = () => movedError(file);
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
