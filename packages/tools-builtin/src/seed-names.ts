/**
 * The names other agents give the same tools, so a model trained on them is understood:
 * tool names (as `aliases`) and argument names (mapped to ours before validation). An argument
 * is renamed only when ours is absent, so a call that uses our names is never changed.
 */
import { composePrepareArguments, renameArguments } from '@agent/core';

/** Tool-name aliases by our tool (Claude Code, claw-code, Kiro, Codex and similar seeds). */
export const seedToolNames = {
  read_file: ['read', 'Read', 'fs_read', 'fsRead', 'view_file'],
  write_file: ['write', 'Write', 'fs_write', 'fsWrite', 'create_file'],
  edit_file: ['Edit', 'str_replace_edit', 'replace_in_file'],
  bash: [
    'Bash',
    'execute_bash',
    'executeBash',
    'execute_cmd',
    'executeCmd',
    'shell',
    'run_command',
    'run_terminal_cmd',
  ],
  glob: ['Glob', 'glob_search', 'file_search', 'find_files'],
  search: ['grep', 'Grep', 'grep_search', 'search_files', 'ripgrep'],
  list_files: ['ls', 'LS', 'list_directory', 'list_dir'],
} as const;

/** Their argument names → ours, by our tool. */
const argumentNames: Record<keyof typeof seedToolNames, Record<string, string>> = {
  read_file: {
    file_path: 'path',
    filePath: 'path',
    file: 'path',
    filename: 'path',
    target_file: 'path',
  },
  write_file: {
    file_path: 'path',
    filePath: 'path',
    file: 'path',
    target_file: 'path',
    file_text: 'content',
    text: 'content',
    contents: 'content',
  },
  edit_file: {
    file_path: 'path',
    filePath: 'path',
    target_file: 'path',
    old_str: 'old_string',
    new_str: 'new_string',
    oldString: 'old_string',
    newString: 'new_string',
  },
  bash: { cmd: 'command', script: 'command', summary: 'description' },
  glob: { glob: 'pattern', glob_pattern: 'pattern', directory: 'path', dir: 'path' },
  search: {
    query: 'pattern',
    regex: 'pattern',
    directory: 'path',
    dir: 'path',
    glob: 'include',
    '-C': 'context',
    base: 'path',
  },
  list_files: {
    directory: 'path',
    dir: 'path',
    relative_workspace_path: 'path',
    target_directory: 'path',
  },
};

/**
 * Grep's flags as Claude Code and claw-code pass them to their search tool: `-i` (ignore case),
 * `-A`/`-B` (context after/before: ours is symmetric, so the larger), `-n` (line numbers: ours
 * always has them); and Kiro's `paths` (globs of the files to search) and output caps
 * (`max_total_lines`, `max_files`).
 */
function grepFlags(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const {
    '-i': ignoreCase,
    '-n': _numbers,
    '-A': after,
    '-B': before,
    paths,
    type,
    multiline,
    max_total_lines: maxLines,
    max_files: maxFiles,
    ...rest
  } = raw as Record<string, unknown>;
  if (
    [ignoreCase, _numbers, after, before, paths, type, multiline, maxLines, maxFiles].every(
      (flag) => flag === undefined,
    )
  )
    return raw;
  const mapped: Record<string, unknown> = { ...rest };
  // Kiro's output caps: lines shown (content mode) and files shown (the other modes) are what
  // head_limit caps; a cap that does not fit the mode stays, and is refused as unknown.
  const listsFiles = rest.output_mode === 'files_with_matches' || rest.output_mode === 'count';
  const cap = listsFiles ? maxFiles : maxLines;
  if (typeof cap === 'number' && !('head_limit' in rest)) mapped.head_limit = cap;
  const unused = listsFiles ? maxLines : maxFiles;
  if (unused !== undefined) mapped[listsFiles ? 'max_total_lines' : 'max_files'] = unused;
  if (cap !== undefined && typeof cap !== 'number')
    mapped[listsFiles ? 'max_files' : 'max_total_lines'] = cap;
  // ripgrep's --type as claw-code passes it: the common types become an include glob; another
  // stays, and is refused as an unknown field (never silently widened to every file).
  const typeGlob =
    typeof type === 'string' && Object.hasOwn(fileTypeGlobs, type)
      ? fileTypeGlobs[type]
      : undefined;
  if (typeGlob !== undefined && !('include' in rest) && paths === undefined)
    mapped.include = typeGlob;
  else if (type !== undefined) mapped.type = type;
  // Ours matches line by line; multiline: false asks for exactly that, true is refused as unknown.
  if (multiline !== undefined && multiline !== false) mapped.multiline = multiline;
  // Kiro's grep `paths`: globs of the files to search; ours is one glob, so several become {a,b}.
  if (Array.isArray(paths) && paths.length > 0 && !('include' in rest))
    mapped.include = paths.length === 1 ? paths[0] : `{${paths.join(',')}}`;
  else if (paths !== undefined) mapped.paths = paths;
  if (typeof ignoreCase === 'boolean' && !('case_sensitive' in rest))
    mapped.case_sensitive = !ignoreCase;
  const around = [after, before].filter((value): value is number => typeof value === 'number');
  if (around.length > 0 && !('context' in rest)) mapped.context = Math.max(...around);
  return mapped;
}

/** ripgrep's `--type` names (the common ones) as globs. */
const fileTypeGlobs: Record<string, string> = {
  c: '*.{c,h}',
  cpp: '*.{cpp,cc,cxx,hpp,hh,hxx,h}',
  css: '*.{css,scss}',
  go: '*.go',
  html: '*.{html,htm}',
  java: '*.java',
  js: '*.{js,jsx,mjs,cjs}',
  json: '*.json',
  kotlin: '*.{kt,kts}',
  md: '*.{md,markdown}',
  markdown: '*.{md,markdown}',
  py: '*.{py,pyi}',
  python: '*.{py,pyi}',
  rb: '*.rb',
  ruby: '*.rb',
  rust: '*.rs',
  sh: '*.{sh,bash}',
  swift: '*.swift',
  toml: '*.toml',
  ts: '*.{ts,tsx,mts,cts}',
  typescript: '*.{ts,tsx,mts,cts}',
  yaml: '*.{yaml,yml}',
};

/**
 * Kiro's `ls` depth 0 (the directory's own entries) is our depth 1; ours starts at 1. Its `ignore`
 * globs (and Claude Code's LS `ignore`) are dropped: the listing only shows more.
 */
function lsDepth(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const { ignore: _ignore, ...rest } = raw as Record<string, unknown>;
  const listed = 'ignore' in raw ? rest : raw;
  return (listed as { depth?: unknown }).depth === 0 ? { ...listed, depth: 1 } : listed;
}

/**
 * claw-code's bash asks for sandbox settings per call (`namespaceRestrictions`, `isolateNetwork`,
 * `filesystemMode`, `allowedMounts`). Here the sandbox is the user's setting, never the model's:
 * they are dropped, and the command runs under the session's sandbox whatever they said.
 */
const clawSandboxFields = [
  'namespaceRestrictions',
  'isolateNetwork',
  'filesystemMode',
  'allowedMounts',
] as const;

/** `prepareArguments` for one of our tools: their argument names become ours. */
export function seedArguments(tool: keyof typeof seedToolNames): (raw: unknown) => unknown {
  if (tool === 'bash') return renameArguments(argumentNames.bash, { drop: clawSandboxFields });
  const rename = renameArguments(argumentNames[tool]);
  if (tool === 'search') return composePrepareArguments(rename, grepFlags);
  if (tool === 'list_files') return composePrepareArguments(rename, lsDepth);
  return rename;
}
