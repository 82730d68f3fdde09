import { readdir, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { oneLineText } from '@agent/core';
import { readRegularFile } from '@agent/core/regular-file';
import { parse as parseYaml } from 'yaml';

/** A skill found on disk: a folder with a `SKILL.md`. */
export interface Skill {
  /** From the front matter: lowercase letters, digits and hyphens, at most 64 characters. */
  name: string;
  /**
   * From the front matter: what the skill does and when to use it (at most 1,024 characters),
   * as one line: line breaks, control and bidirectional-override characters become spaces.
   */
  description: string;
  /** The skill's folder (absolute, symlinks resolved). */
  dir: string;
  /** The `SKILL.md` file. */
  file: string;
  /** Which root it was found under (the first root wins a name both have). */
  root: string;
  /** Other front-matter fields (license, allowed-tools, metadata…), as parsed. */
  metadata: Record<string, unknown>;
}

/** What {@link discoverSkills} found: the skills, and why the others were skipped. */
export interface SkillDiscovery {
  skills: Skill[];
  /** One line per skipped folder or shadowed name, naming the file and the reason. */
  warnings: string[];
}

const namePattern = /^[a-z0-9]+(-[a-z0-9]+)*$/;
/** Largest `SKILL.md` read (1 MiB): the convention asks for a few thousand words at most. */
export const maxSkillFileBytes = 1024 * 1024;

/** Why a `SKILL.md` cannot be read: not a regular file, too large, or a link out of its folder. */
export class SkillFileError extends Error {
  override readonly name = 'SkillFileError';
}

/**
 * Reads a skill's `SKILL.md` from a folder that may be hostile (a cloned repository's
 * `.claude/skills`): only a regular file inside the skill's own folder (symlinks resolved), at
 * most {@link maxSkillFileBytes}. A FIFO or device must not hang or flood the reader, and a link
 * to `~/.ssh/…` must not turn a secret into instructions.
 */
export async function readSkillFile(dir: string, file: string): Promise<string> {
  const [realDir, realFile] = await Promise.all([realpath(dir), realpath(file)]);
  const inside = path.relative(realDir, realFile);
  if (
    inside === '' ||
    inside === '..' ||
    inside.startsWith(`..${path.sep}`) ||
    path.isAbsolute(inside)
  )
    throw new SkillFileError(`it links outside its skill folder (to ${realFile})`);
  // Not followed: the path was resolved (a link swapped in since is refused, not read).
  const outcome = await readRegularFile(realFile, {
    maxBytes: maxSkillFileBytes,
    followSymlinks: false,
  });
  switch (outcome.kind) {
    case 'read':
      return outcome.bytes.toString('utf8');
    case 'not-regular':
      throw new SkillFileError('it is not a regular file');
    case 'too-large':
      // Read to the cap, not to the size stat gave: a file growing meanwhile is cut, not followed.
      throw new SkillFileError(
        outcome.size > outcome.stats.size
          ? `it is larger than ${maxSkillFileBytes} bytes`
          : `it is ${outcome.size} bytes (at most ${maxSkillFileBytes})`,
      );
    case 'missing':
    case 'unreadable':
      throw outcome.error;
    case 'refused':
      throw new SkillFileError(outcome.reason);
    default: {
      const _exhaustive: never = outcome;
      return _exhaustive;
    }
  }
}

/**
 * Largest front matter parsed: a name, a description of at most 1,024 characters and a few other
 * fields fit many times over. The YAML parser checks keys for duplicates pairwise: 60,000 keys
 * (600 kB, under the file limit) held the agent's thread for 43 s at start-up.
 */
export const maxFrontMatterChars = 16 * 1024;

const maxNameLength = 64;
/**
 * Most entries of one root read as skills (by name). Each skill's description goes into the
 * `skill` tool's own description, sent with every request: a repository's 10,000 skill folders
 * (a few kB in git) made it megabytes — past any model's context, so no request succeeded there.
 */
export const maxSkillsPerRoot = 200;
const maxDescriptionLength = 1024;

/**
 * The usual skill folders, most specific first: the workspace's `.agent/skills` and
 * `.claude/skills`, then the user's `~/.agent/skills` and `~/.claude/skills`.
 */
export function defaultSkillRoots(cwd: string, home: string = homedir()): string[] {
  return [
    path.join(cwd, '.agent', 'skills'),
    path.join(cwd, '.claude', 'skills'),
    path.join(home, '.agent', 'skills'),
    path.join(home, '.claude', 'skills'),
  ];
}

/** Splits a `SKILL.md` into its YAML front matter and the instructions after it. */
export function parseSkillFile(
  text: string,
): { frontMatter: Record<string, unknown>; body: string } | { error: string } {
  const normalised = text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
  const match = /^---\n([\s\S]*?)\n---[ \t]*(?:\n|$)/.exec(normalised);
  if (match === null)
    return { error: 'no YAML front matter (a block between "---" lines at the top)' };
  const block = match[1] as string;
  if (block.length > maxFrontMatterChars)
    return {
      error: `its front matter is ${block.length} characters (at most ${maxFrontMatterChars})`,
    };
  let parsed: unknown;
  try {
    // Errors only: the parser's warnings (an unknown tag) went to this process's stderr with the
    // file's own line quoted — a repository's text, escape sequences included, on the terminal.
    parsed = parseYaml(block, { logLevel: 'error' });
  } catch (error) {
    return {
      error: `its front matter is not valid YAML (${(error as Error).message.split('\n')[0]})`,
    };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    return { error: 'its front matter is not a mapping of fields' };
  return {
    frontMatter: parsed as Record<string, unknown>,
    body: normalised.slice(match[0].length),
  };
}

function checkFields(frontMatter: Record<string, unknown>): string | undefined {
  const { name, description } = frontMatter;
  if (typeof name !== 'string' || name === '') return 'the front matter has no "name"';
  if (name.length > maxNameLength || !namePattern.test(name))
    return `"name: ${name}" must be lowercase letters, digits and single hyphens (at most ${maxNameLength})`;
  if (typeof description !== 'string' || oneLineText(description) === '')
    return 'the front matter has no "description"';
  if (description.length > maxDescriptionLength)
    return `its description is ${description.length} characters (at most ${maxDescriptionLength})`;
  return undefined;
}

/**
 * Finds the skills under `roots` (each root's direct subfolders holding a `SKILL.md`). A folder
 * whose `SKILL.md` is unreadable or malformed is skipped with a warning; the others still load.
 * When two roots have a skill of the same name, the earlier root wins (the workspace over the
 * user's). Sorted by name.
 */
export async function discoverSkills(roots: readonly string[]): Promise<SkillDiscovery> {
  const byName = new Map<string, Skill>();
  const warnings: string[] = [];
  for (const root of roots) {
    let entries: string[];
    try {
      entries = (await readdir(root)).sort();
    } catch {
      continue; // A root that does not exist has no skills.
    }
    const folders = entries.filter((entry) => !entry.startsWith('.'));
    if (folders.length > maxSkillsPerRoot)
      warnings.push(
        `${root}: ${folders.length - maxSkillsPerRoot} of its ${folders.length} entries are not read as skills (at most ${maxSkillsPerRoot}, by name)`,
      );
    for (const entry of folders.slice(0, maxSkillsPerRoot)) {
      const file = path.join(root, entry, 'SKILL.md');
      let text: string;
      try {
        if (!(await stat(path.join(root, entry))).isDirectory()) continue;
        text = await readSkillFile(path.join(root, entry), file);
      } catch (error) {
        if (error instanceof SkillFileError) {
          warnings.push(`${file}: skipped, ${error.message}`);
          continue;
        }
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
          warnings.push(`${file}: skipped, it cannot be read (${(error as Error).message})`);
        continue;
      }
      const parsed = parseSkillFile(text);
      if ('error' in parsed) {
        warnings.push(`${file}: skipped, ${parsed.error}`);
        continue;
      }
      const problem = checkFields(parsed.frontMatter);
      if (problem !== undefined) {
        warnings.push(`${file}: skipped, ${problem}`);
        continue;
      }
      const { name, description, ...metadata } = parsed.frontMatter as {
        name: string;
        description: string;
      } & Record<string, unknown>;
      const earlier = byName.get(name);
      if (earlier !== undefined) {
        warnings.push(`${file}: skill "${name}" is also in ${earlier.root}, which wins`);
        continue;
      }
      const dir = await realpath(path.join(root, entry));
      byName.set(name, { name, description: oneLineText(description), dir, file, root, metadata });
    }
  }
  const skills = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  return { skills, warnings };
}

/** The files of a skill's folder besides `SKILL.md`, relative, sorted (at most `limit`). */
export async function skillFiles(
  dir: string,
  limit = 200,
): Promise<{ files: string[]; more: number }> {
  const files: string[] = [];
  let more = 0;
  async function walk(relative: string, depth: number): Promise<void> {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(path.join(dir, relative), { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const child = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        if (depth < 4) await walk(child, depth + 1);
      } else if (child !== 'SKILL.md') {
        if (files.length < limit) files.push(child);
        else more++;
      }
    }
  }
  await walk('', 0);
  return { files, more };
}
