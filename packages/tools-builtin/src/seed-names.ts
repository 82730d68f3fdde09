/**
 * The names other agents give the same tools, so a model trained on them is understood:
 * tool names (as `aliases`) and argument names (mapped to ours before validation). An argument
 * is renamed only when ours is absent, so a call that uses our names is never changed.
 */

/** Tool-name aliases by our tool (Claude Code, claw-code, Kiro, Codex and similar seeds). */
export const seedToolNames = {
  read_file: ['read', 'Read', 'fs_read', 'fsRead', 'view_file'],
  write_file: ['write', 'Write', 'fs_write', 'fsWrite', 'create_file'],
  edit_file: ['Edit', 'str_replace_edit', 'replace_in_file'],
  bash: ['Bash', 'execute_bash', 'executeBash', 'shell', 'run_command', 'run_terminal_cmd'],
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
  bash: { cmd: 'command', script: 'command' },
  glob: { glob: 'pattern', glob_pattern: 'pattern', directory: 'path', dir: 'path' },
  search: { query: 'pattern', regex: 'pattern', directory: 'path', dir: 'path' },
  list_files: {
    directory: 'path',
    dir: 'path',
    relative_workspace_path: 'path',
    target_directory: 'path',
  },
};

/** `prepareArguments` for one of our tools: their argument names become ours. */
export function seedArguments(tool: keyof typeof seedToolNames): (raw: unknown) => unknown {
  const names = argumentNames[tool];
  return (raw) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
    const record = raw as Record<string, unknown>;
    let renamed: Record<string, unknown> | undefined;
    for (const [theirs, ours] of Object.entries(names)) {
      if (!(theirs in record) || ours in record || (renamed !== undefined && ours in renamed))
        continue;
      renamed ??= { ...record };
      renamed[ours] = renamed[theirs];
      delete renamed[theirs];
    }
    return renamed ?? raw;
  };
}
