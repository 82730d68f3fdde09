/**
 * Reading a file a project ships for the model's context (AGENTS.md, an agent definition): the
 * CLI reads it itself, outside the sandbox, so it must not become a way to the user's files. A
 * repository can hold `AGENTS.md -> ~/.ssh/id_rsa` (git stores symlinks), and a sandboxed command
 * can put such a link in the workspace before a later read; either would send the target to the
 * model. Only a regular file whose real path lies inside the project is read.
 */
import { isAbsolute, relative, sep } from 'node:path';
import * as regularFile from '@agent/core/regular-file';
import { jsonErrorOffset } from './json-error-place.js';
import { fileSystemReason } from './system-errors.js';

/** What {@link readProjectFile} found. */
export type ProjectFileRead =
  | { kind: 'read'; text: string }
  | { kind: 'missing' }
  /** It exists but was not read; `reason` names why, for a notice. */
  | { kind: 'refused'; reason: string };

function inside(root: string, path: string): boolean {
  const rest = relative(root, path);
  return rest === '' || (rest !== '..' && !rest.startsWith(`..${sep}`) && !isAbsolute(rest));
}

/**
 * Largest project file read for the model's context (bytes): AGENTS.md and agent files go whole
 * into a system prompt, and a 2 GB sparse AGENTS.md ended the start (`File size … is greater than
 * 2 GiB`, naming no file), a 300 MB one took 1.3 GB of memory and went to the model in full.
 */
export const maximumProjectFileBytes = 1024 * 1024;

/**
 * Reads `path` when it is a regular file of at most {@link maximumProjectFileBytes} whose real
 * path lies inside `root` (a real path). The check is made on the opened file
 * (`/proc/self/fd/N` on Linux, the real path elsewhere), so a link swapped in after a check
 * changes nothing; a FIFO cannot block the read (`O_NONBLOCK`).
 */
export async function readProjectFile(path: string, root: string): Promise<ProjectFileRead> {
  const outcome = await regularFile.readRegularFile(path, {
    maxBytes: maximumProjectFileBytes,
    realPath: true,
    check: ({ realPath = path }) =>
      inside(root, realPath) ? undefined : `it leads outside the project (to ${realPath})`,
  });
  switch (outcome.kind) {
    case 'read':
      return { kind: 'read', text: outcome.bytes.toString('utf8') };
    case 'missing':
      return { kind: 'missing' };
    case 'not-regular':
      return { kind: 'refused', reason: 'it is not a regular file' };
    case 'too-large':
      return {
        kind: 'refused',
        reason: `it is ${outcome.size} bytes, over the ${maximumProjectFileBytes} read for the model's instructions`,
      };
    case 'refused':
      return { kind: 'refused', reason: outcome.reason };
    case 'unreadable':
      return { kind: 'refused', reason: `it cannot be read (${outcome.code})` };
    default: {
      const _exhaustive: never = outcome;
      return _exhaustive;
    }
  }
}

/** A settings file larger than this is not one (bytes). */
export const maximumSettingsFileBytes = 1024 * 1024;

/**
 * The text of a settings file, undefined when there is none; throws a message naming the file
 * when it is not a regular file of at most {@link maximumSettingsFileBytes} (a FIFO in its place
 * hung the start where no signal but SIGKILL ended it; a link to `/dev/zero` read until memory ran
 * out).
 */
export function readSettingsText(path: string): Promise<string | undefined> {
  return readRegularFile(path, maximumSettingsFileBytes, 'a settings file');
}

/** `permission denied (EACCES)` for an error code with words, else the code. */
function codeText(code: string | undefined): string {
  const reason = fileSystemReason({ code });
  return reason === undefined ? String(code) : `${reason} (${code})`;
}

/**
 * The text of a file the user names (`--resume`, `--scripted`, `--mcp-config`, a settings file,
 * `~/.agent/AGENTS.md`…), undefined when it does not exist; throws a message naming the file when
 * it is not a regular file, or is over `maxBytes` (`what` names the kind of file in it: "a
 * settings file holds at most …"). Checked on the opened file; a FIFO cannot block the open
 * (`O_NONBLOCK`): a FIFO or `/dev/tty` in its place hung the start where no signal but SIGKILL
 * ended it, `/dev/zero` read until memory ran out. A leading byte-order mark is dropped.
 */
export async function readRegularFile(
  path: string,
  maxBytes: number,
  what: string,
): Promise<string | undefined> {
  const outcome = await regularFile.readRegularFile(path, { maxBytes });
  switch (outcome.kind) {
    case 'read':
      // A byte-order mark, as Windows editors write one, is not part of the text (JSON.parse
      // refused the file for it).
      return regularFile.utf8Text(outcome.bytes);
    case 'missing':
      if (outcome.code === 'ENOENT') return undefined;
      throw new Error(`Cannot read ${path}: ${codeText(outcome.code)}`);
    case 'not-regular':
      throw new Error(`${path} is not a regular file`);
    case 'too-large':
      throw new Error(`${path} is ${outcome.size} bytes: ${what} holds at most ${maxBytes}`);
    case 'refused':
    case 'unreadable':
      throw new Error(
        `Cannot read ${path}: ${outcome.kind === 'refused' ? outcome.reason : codeText(outcome.code)}`,
      );
    default: {
      const _exhaustive: never = outcome;
      return _exhaustive;
    }
  }
}

/**
 * `JSON.parse` whose error says where and why ({@link jsonProblem}: line, column, a comment or a
 * trailing comma named) without quoting the text, as the settings files' errors do.
 */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(jsonProblem(error, text));
  }
}

/**
 * Why `text` is not JSON, without quoting it: V8's message shows a piece of the text, and a
 * settings file can be a link to a file of secrets. With the text, the place is given as a line
 * and column, and the two mistakes JSON's editors allow but JSON does not are named.
 */
export function jsonProblem(error: unknown, text?: string): string {
  if (text !== undefined && text.trim() === '') return 'it is empty';
  const message = error instanceof Error ? error.message : String(error);
  // V8 says "line L column C" (newer) or "position P" (older), depending on the Node version.
  const lineColumn = /line (\d+) column (\d+)/.exec(message);
  const position = /position (\d+)/.exec(message);
  let line: number;
  let column: number;
  let offset: number | undefined;
  if (lineColumn !== null) {
    line = Number(lineColumn[1]);
    column = Number(lineColumn[2]);
    if (text !== undefined) {
      const lines = text.split('\n');
      offset =
        lines.slice(0, line - 1).reduce((sum, each) => sum + each.length + 1, 0) + column - 1;
    }
  } else if (text !== undefined) {
    // V8 gives no place for an unexpected token ("Unexpected token '/', "…" is not valid JSON").
    offset = position === null ? jsonErrorOffset(text) : Number(position[1]);
    if (offset === undefined) return 'it is not valid JSON';
    const before = text.slice(0, offset).split('\n');
    line = before.length;
    column = (before.at(-1) ?? '').length + 1;
  } else if (position !== null) {
    return `it is not valid JSON (at character ${position[1]})`;
  } else if (/Unexpected end/i.test(message)) {
    return 'it is not valid JSON (it ends before the object does, a missing } or ], or a cut-off value)';
  } else {
    return 'it is not valid JSON';
  }
  const mistake = offset === undefined || text === undefined ? '' : jsonMistake(text, offset);
  return `it is not valid JSON (line ${line}, column ${column}${mistake})`;
}

/** The usual reason at `offset`: a comment or a trailing comma, which JSON does not allow. */
function jsonMistake(text: string, offset: number): string {
  if (offset >= text.trimEnd().length)
    return ': it ends before the object does, a missing } or ], or a cut-off value';
  const here = text.charAt(offset);
  if (here === '/' || here === '#') return ': a comment, which JSON does not allow';
  // Outside a string a line break is space: one where the JSON stops is inside a quoted text.
  if (here === '\n' || here === '\r')
    return ': a line break inside a quoted text, which JSON writes as \\n';
  if (text.slice(0, offset).trim() === '')
    return ': a JSON file starts with { (or [), not with this';
  if (here === "'") return ': a single quote, where JSON needs double quotes ("…")';
  if (/[A-Za-z_$]/.test(here) && /[{,]\s*$/.test(text.slice(0, offset)))
    return ': a name without double quotes, which JSON needs ("name": …)';
  if (/[A-Za-z_$]/.test(here) && /:\s*$/.test(text.slice(0, offset)))
    return ': a value without double quotes (text is written "…"; true, false, null and numbers without)';
  if ((here === '}' || here === ']') && text.slice(0, offset).trimEnd().endsWith(','))
    return ': a comma before the closing bracket, which JSON does not allow';
  return '';
}
