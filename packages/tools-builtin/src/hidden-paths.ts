import * as path from 'node:path';
import type { PathDenialCheck } from '@agent/core';
import { walk } from './walk.js';
import type { Workspace } from './workspace.js';

/**
 * What a tool that reads many paths at once (search, glob, list_files) leaves out: other
 * sessions' private files (the workspace's hidden roots; never mentioned) and paths the
 * permission rules cover for reading (`ctx.isPathDenied`; counted, never named). A directory
 * left out is not entered.
 */
export class HiddenPaths {
  readonly #workspace: Workspace;
  readonly #check: PathDenialCheck | undefined;
  /** Directory verdicts by path, so a search's many results under one directory ask once. */
  readonly #directories = new Map<string, boolean>();
  /** Files the rules cover, left out. */
  files = 0;
  /** Directories the rules cover, left out with everything in them. */
  directories = 0;

  constructor(workspace: Workspace, check: PathDenialCheck | undefined) {
    this.#workspace = workspace;
    this.#check = check;
  }

  /** Whether permission rules may cover any path read (false: nothing to check or count). */
  get active(): boolean {
    return this.#check !== undefined && (this.#check.covers?.('read') ?? true);
  }

  /** Whether the rules cover `real` for reading (not counted). */
  covered(real: string): boolean {
    return this.#check?.(real, 'read') === true;
  }

  /**
   * Whether a walk leaves this entry out; counted when the rules cover it — a file only when it
   * would have been shown (`wanted`: it matches the call's pattern).
   */
  excludes(entry: { path: string; isDirectory: boolean }, wanted = true): boolean {
    if (this.#workspace.isHidden(entry.path)) return true;
    if (!this.covered(entry.path)) return false;
    if (entry.isDirectory) this.directories++;
    else if (wanted) this.files++;
    return true;
  }

  /**
   * Whether a file found below `root` (by an engine that walks on its own) is left out: it, or a
   * directory between `root` and it, is another session's or covered by the rules. Not counted.
   */
  excludesFound(root: string, file: string): boolean {
    if (this.#workspace.isHidden(file)) return true;
    if (!this.active) return false;
    if (this.covered(file)) return true;
    for (
      let directory = path.dirname(file);
      directory !== root && directory.startsWith(`${root}${path.sep}`);
      directory = path.dirname(directory)
    ) {
      let covered = this.#directories.get(directory);
      if (covered === undefined) {
        covered = this.covered(directory);
        this.#directories.set(directory, covered);
      }
      if (covered) return true;
    }
    return false;
  }

  /** `[2 files and 1 directory hidden by permission rules]`, or undefined when none was. */
  note(): string | undefined {
    const parts: string[] = [];
    if (this.files > 0) parts.push(`${this.files} file${this.files === 1 ? '' : 's'}`);
    if (this.directories > 0)
      parts.push(`${this.directories} director${this.directories === 1 ? 'y' : 'ies'}`);
    if (parts.length === 0) return undefined;
    return `[${parts.join(' and ')} hidden by permission rules]`;
  }
}

/** Entries a counting walk looks at, at most (a huge tree cannot stall a search). */
const maxCountedEntries = 200_000;

/**
 * Counts into `hidden` the files (and directories) below `root` the rules cover, walking names
 * only as the search engines do (ignore files, skipped names, the `include` glob). The count is
 * made without reading any file, so it says nothing about what covered files contain — counting
 * only covered files *with matches* would let a model learn their content a regex at a time.
 */
export async function countCoveredFiles(options: {
  root: string;
  workspace: Workspace;
  hidden: HiddenPaths;
  skip: readonly string[];
  respectIgnoreFiles: boolean;
  include: ((relative: string) => boolean) | undefined;
  signal: AbortSignal;
}): Promise<void> {
  const { hidden, include } = options;
  let seen = 0;
  for await (const entry of walk({
    root: options.root,
    fs: options.workspace.fs,
    skip: options.skip,
    respectIgnoreFiles: options.respectIgnoreFiles,
    signal: options.signal,
    // Files outside the include glob are never searched: not counted either.
    exclude: (found) =>
      hidden.excludes(found, found.isDirectory || include === undefined || include(found.relative)),
  })) {
    if (++seen >= maxCountedEntries) return;
    void entry;
  }
}
