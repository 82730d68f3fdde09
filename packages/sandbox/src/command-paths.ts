// The paths a sandbox protects, looked up again for each command: those kept read-only inside
// the writable roots, and those hidden.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AutoRunFiles } from './auto-run-files.js';
import { ancestorIdentity } from './bound-paths.js';
import { includedConfigFiles, missingIncludedConfigFiles } from './git-config-includes.js';
import { gitEntryPaths, type RepositoryWatch } from './git-repositories.js';
import { type HiddenPatterns, type LinkedFile, PatternPaths } from './pattern-paths.js';
import { isInside, outermostPaths, realPathOrResolved } from './real-paths.js';
import { type SecretMask, secretMasks } from './secret-paths.js';
import { startupFilesToProtect } from './startup-files.js';

/** Options of {@link commandPaths}. */
export interface CommandPathsOptions {
  /** Whether bubblewrap runs the commands: without it nothing is hidden or kept by the caller's paths. */
  active: boolean;
  /** The writable roots, by real path. */
  writableRoots: readonly string[];
  /** The user's home, by real path. */
  home: string;
  /** The secret paths to hide where they exist (looked up per command). */
  secretCandidates: readonly string[];
  /** The caller's more hidden paths (`SandboxOptions.hiddenPaths`). */
  hiddenPaths: (() => readonly string[]) | undefined;
  /** The caller's hidden patterns (`SandboxOptions.hiddenPatterns`). */
  hiddenPatterns: (() => HiddenPatterns | undefined) | undefined;
  /** The caller's read-only paths (`SandboxOptions.readOnlyPaths`). */
  readOnlyPaths: (() => readonly string[]) | undefined;
  /** The caller's read-only patterns (`SandboxOptions.readOnlyPatterns`). */
  readOnlyPatterns: (() => HiddenPatterns | undefined) | undefined;
  /** The repositories found in the writable roots, when they are kept read-only. */
  repositories: RepositoryWatch | undefined;
  /** Whether the home's startup files inside a writable root are kept read-only. */
  protectStartup: boolean;
  /** The editors' and tools' auto-run files of the roots, when they are kept read-only. */
  autoRunFiles: AutoRunFiles | undefined;
}

/** The paths protected from the next command, each looked up when called. */
export interface CommandPaths {
  /** Real paths inside the writable roots kept read-only, none inside another. */
  readOnly(): string[];
  /** What is hidden: the secrets that exist, what the patterns cover, and their other names. */
  masks(): SecretMask[];
  /** The startup files protected now, in the order they are looked for. */
  startupFiles(): string[];
  /** Each protected startup file, with who the directories above it are (see ancestorIdentity). */
  startupFileIdentities(): Map<string, string>;
}

/** The paths a sandbox protects per command (see {@link CommandPaths}). */
export function commandPaths(options: CommandPathsOptions): CommandPaths {
  const { active, writableRoots, home, repositories } = options;
  const keptReadOnlyByCaller = options.readOnlyPaths;
  const keptReadOnlyByPattern = options.readOnlyPatterns;
  const hiddenByCaller = options.hiddenPaths;
  const hiddenByPattern = options.hiddenPatterns;
  const candidates = options.secretCandidates;
  // One look through the folders per command for each use; their listings are shared.
  const patternPaths = new PatternPaths();
  const startupFiles = () =>
    options.protectStartup ? startupFilesToProtect(home, writableRoots) : [];
  return {
    readOnly: () =>
      outermostPaths([
        ...(repositories === undefined ? [] : currentGitPaths(writableRoots, repositories.paths())),
        ...startupFiles(),
        ...(options.autoRunFiles?.paths() ?? []),
        // A file the repository's configuration includes, not made yet: kept from being made.
        ...(repositories === undefined || options.autoRunFiles === undefined
          ? []
          : options.autoRunFiles.keepMissing(
              gitDirectoriesNow(writableRoots, repositories.paths()).flatMap((gitDirectory) =>
                missingIncludedConfigFiles(gitDirectory, writableRoots),
              ),
            )),
        ...(keptReadOnlyByCaller === undefined || !active
          ? []
          : existingInside(keptReadOnlyByCaller(), writableRoots)),
        ...(keptReadOnlyByPattern === undefined || !active
          ? []
          : existingInside(
              patternPaths.find({
                roots: writableRoots,
                hidden: keptReadOnlyByPattern(),
                linked: [],
              }),
              writableRoots,
            )),
      ]),
    masks: () => {
      if (!active) return [];
      const named =
        hiddenByCaller === undefined ? candidates : [...candidates, ...hiddenByCaller()];
      // What a pattern covers, then the other names (hard links) of every hidden file: a bind
      // mount hides one name only, and `cat backup-of-key` reads the same bytes.
      const hidden = hiddenByPattern?.();
      const covered =
        hidden === undefined
          ? named
          : [...named, ...patternPaths.find({ roots: writableRoots, hidden, linked: [] })];
      const masks = secretMasks(covered, writableRoots);
      const linked = linkedFiles(masks);
      if (linked.length === 0) return masks;
      const names = patternPaths.find({ roots: writableRoots, hidden: undefined, linked });
      return secretMasks([...covered, ...names], writableRoots);
    },
    startupFiles,
    // A startup file at the same path under a directory moved in since is the command's.
    startupFileIdentities: () =>
      new Map(startupFiles().map((file) => [file, ancestorIdentity(file, writableRoots)])),
  };
}

/** The real paths of `paths` that exist and lie inside a writable root (the rest are read-only already). */
function existingInside(paths: readonly string[], roots: readonly string[]): string[] {
  const found: string[] = [];
  for (const entry of paths) {
    if (fs.lstatSync(entry, { throwIfNoEntry: false }) === undefined) continue;
    const real = realPathOrResolved(entry);
    if (roots.some((root) => isInside(root, real) && real !== root)) found.push(real);
  }
  return found;
}

/**
 * What keeps the repositories of `roots` as they are, for the next command: each root's `.git`
 * (directory, file or link; looked up now) with what it points to inside the roots, and the
 * nested ones found when the sandbox was created that still exist — each path once, none inside
 * another.
 */
function currentGitPaths(roots: readonly string[], nested: readonly string[]): string[] {
  const repositories = gitDirectoriesNow(roots, nested);
  // The files a repository's config includes from the workspace run commands as its config does.
  return outermostPaths([
    ...repositories,
    ...repositories.flatMap((gitDirectory) => includedConfigFiles(gitDirectory, roots)),
  ]);
}

/** Each root's `.git` (and what it points to inside the roots), and the nested ones that still exist. */
function gitDirectoriesNow(roots: readonly string[], nested: readonly string[]): string[] {
  return [
    ...roots.flatMap((root) => gitEntryPaths(path.join(root, '.git'), roots)),
    ...nested.filter((entry) => fs.lstatSync(entry, { throwIfNoEntry: false }) !== undefined),
  ];
}

/** The hidden files with more than one name (hard links), by identity. */
function linkedFiles(masks: readonly SecretMask[]): LinkedFile[] {
  const linked: LinkedFile[] = [];
  for (const mask of masks) {
    if (mask.directory) continue;
    const stat = fs.lstatSync(mask.path, { throwIfNoEntry: false });
    if (stat?.isFile() && stat.nlink > 1) linked.push({ dev: stat.dev, ino: stat.ino });
  }
  return linked;
}
