import type { WorkspaceEdit } from 'vscode-languageserver-protocol';
import { LspError } from './errors.js';
import { isPathInside, readFileInside, realPathOf } from './paths.js';
import {
  digestOf,
  type FileChange,
  fileChangesOf,
  textEditsByFile,
  unifiedDiff,
  writeEditedFile,
} from './workspace-edit.js';

/** A rename computed but not applied: the diff to show and the changes to write. */
export interface RenamePreview {
  /** Pass to {@link LspWorkspace.applyEdit} to write it. */
  id: string;
  /** Absolute paths of the files it changes. */
  files: string[];
  /** Unified diff, workspace-relative paths. */
  diff: string;
  /** Parts of the server's edit that are not text edits (file renames), which are not applied. */
  unsupported: string[];
}

/** A previewed edit kept until applied (the newest {@link maxPreviews}). */
interface StoredPreview {
  changes: FileChange[];
  digests: Map<string, string>;
}

const maxPreviews = 20;

/** The previewed renames of a workspace, the newest {@link maxPreviews}. */
export class RenamePreviews {
  readonly #previews = new Map<string, StoredPreview>();
  #counter = 0;

  /**
   * Keeps a server's edit under a new id and returns its diff. Throws `LspError` when it would
   * touch files outside `roots` (real paths) or changes nothing.
   */
  async add(
    edit: WorkspaceEdit | null,
    roots: readonly string[],
    display: (file: string) => string,
  ): Promise<RenamePreview> {
    const { edits, unsupported } = textEditsByFile(edit ?? {});
    const outside: string[] = [];
    for (const target of edits.keys()) {
      const real = await realPathOf(target);
      if (!roots.some((root) => isPathInside(root, real))) outside.push(real);
    }
    if (outside.length > 0)
      throw new LspError(
        `The rename would change files outside the workspace (${outside.join(', ')}); it is refused.`,
        { code: 'request-failed' },
      );
    const changes = await fileChangesOf(edits, roots);
    if (changes.length === 0)
      throw new LspError('The language server found nothing to rename at this position.', {
        code: 'request-failed',
      });
    this.#counter += 1;
    const id = `rename-${this.#counter}`;
    this.#previews.set(id, {
      changes,
      digests: new Map(changes.map((change) => [change.path, digestOf(change.before)])),
    });
    for (const old of [...this.#previews.keys()].slice(0, -maxPreviews)) this.#previews.delete(old);
    return {
      id,
      files: changes.map((change) => change.path),
      diff: await unifiedDiff(changes, display),
      unsupported,
    };
  }

  /** The files a stored preview would write (absolute), or undefined when the id is unknown. */
  files(id: string): string[] | undefined {
    return this.#previews.get(id)?.changes.map((change) => change.path);
  }

  /**
   * Writes a previewed edit and forgets it. Refuses (`LspError`, nothing written) when any of
   * its files changed since the preview; each file is written where it was judged (`writeEditedFile`).
   */
  async apply(
    id: string,
    display: (file: string) => string,
    roots: readonly string[],
  ): Promise<string[]> {
    const preview = this.#previews.get(id);
    if (preview === undefined)
      throw new LspError(
        `No previewed edit "${id}" (previews are kept until applied, the newest ${maxPreviews}).`,
        {
          code: 'request-failed',
        },
      );
    for (const change of preview.changes) {
      const current = await readFileInside(change.path, roots);
      if (current === undefined || digestOf(current) !== preview.digests.get(change.path))
        throw new LspError(
          `${display(change.path)} changed since the rename was previewed; preview it again.`,
          { code: 'request-failed' },
        );
    }
    for (const change of preview.changes) await writeEditedFile(change.path, change.after);
    this.#previews.delete(id);
    return preview.changes.map((change) => change.path);
  }
}
