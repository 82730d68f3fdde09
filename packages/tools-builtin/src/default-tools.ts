import { AgentError, type AnyAgentTool } from '@agent/core';
import { BackgroundTasks } from './background-tasks.js';
import { createBashTool } from './bash.js';
import { createBashOutputTool } from './bash-output-tool.js';
import { type BashToolOptions, sandboxOf } from './bash-settings.js';
import { createEditFileTool, createTextEditorTool, type EditFileToolOptions } from './edit-file.js';
import { withFsReadBatch } from './fs-read-batch.js';
import { withWriteCommands } from './fs-write-commands.js';
import { createGlobTool } from './glob.js';
import { createKnowledgeTool } from './knowledge.js';
import { createListFilesTool } from './list-files.js';
import { createNotebookEditTool } from './notebook.js';
import type { ProtectedWrites } from './protected-writes.js';
import { createReadFileTool, type ReadFileToolOptions } from './read-file.js';
import { createReportIssueTool, type ReportIssueToolOptions } from './report-issue.js';
import { createSearchTool, type SearchToolOptions } from './search.js';
import { createSendUserMessageTool, createSleepTool } from './small-tools.js';
import { SpillDirectory } from './spill-dir.js';
import { createThinkTool, type ThinkToolOptions } from './think.js';
import { createTodoTool, type TodoToolOptions } from './todo.js';
import { withTodoCommands } from './todo-commands.js';
import { createUseAwsTool } from './use-aws.js';
import { type FileSystemOperations, Workspace } from './workspace.js';
import { createWriteFileTool } from './write-file.js';

/** Names of the tools {@link defaultTools} can make. */
export type BuiltinToolName =
  | 'bash'
  | 'bash_output'
  | 'read_file'
  | 'write_file'
  | 'edit_file'
  | 'text_editor'
  | 'list_files'
  | 'glob'
  | 'search'
  | 'todo_write'
  | 'sleep'
  | 'send_user_message'
  | 'notebook_edit'
  | 'think'
  | 'report_issue'
  | 'use_aws'
  | 'knowledge';

/**
 * Tools made when `tools` is not given. Opt-in: `text_editor` (it overlaps edit_file), and the
 * tools Kiro's names reach that most sessions do not need — `think`, `report_issue`, `use_aws`,
 * `knowledge` ({@link kiroToolNames}).
 */
export const defaultToolNames: readonly BuiltinToolName[] = [
  'bash',
  'bash_output',
  'read_file',
  'write_file',
  'edit_file',
  'list_files',
  'glob',
  'search',
  'todo_write',
  'sleep',
  'send_user_message',
  'notebook_edit',
];

/** The opt-in tools Kiro's tool names reach (`thinking`, `report_issue`, `use_aws`, `knowledge`). */
export const kiroToolNames: readonly BuiltinToolName[] = [
  'think',
  'report_issue',
  'use_aws',
  'knowledge',
];

/** Options of {@link defaultTools}. */
export interface DefaultToolsOptions {
  /** Working directory of bash and base of relative paths. */
  cwd: string;
  /** Directories file tools may touch [`[cwd]`], compared by real path. */
  roots?: readonly string[];
  /** Which tools to make [defaultToolNames]; `use_aws` only with `bash` (its commands are bash calls). */
  tools?: readonly BuiltinToolName[];
  /** File-system operations for the file tools [node:fs/promises]. */
  fs?: FileSystemOperations;
  /**
   * Directories no file tool may read, write or list even inside the roots (real paths compared):
   * e.g. the credential stores and the agent's own state when the workspace is the home directory
   * [none besides the other sessions' spill files].
   */
  hiddenRoots?: readonly string[];
  /**
   * Writes of the file tools that need the `full-access` tier: into a repository's git directory,
   * into the home's startup files [both] — as bash's sandbox keeps them read-only.
   */
  protectedWrites?: ProtectedWrites;
  /** Options of the bash tool (besides `cwd`). */
  bash?: Omit<BashToolOptions, 'cwd' | 'backgroundTasks'>;
  /** Options of read_file (besides where it works). */
  readFile?: Pick<
    ReadFileToolOptions,
    'defaultLimit' | 'maxLineChars' | 'maxOutputChars' | 'maxImageBytes'
  >;
  /** Options of edit_file and text_editor (besides where they work). */
  editFile?: Pick<EditFileToolOptions, 'maxEditBytes'>;
  /** Options of search (besides where it works). */
  search?: Pick<
    SearchToolOptions,
    'engine' | 'ripgrepPath' | 'skip' | 'defaultHeadLimit' | 'maxOutputChars'
  >;
  /** Options of todo_write (`onChange` for a UI, `initial` list). */
  todo?: TodoToolOptions;
  /** Options of think (`onThought` for a UI or log). */
  think?: ThinkToolOptions;
  /** Options of report_issue (the GitHub repository, the host's context, `onDraft`). */
  reportIssue?: ReportIssueToolOptions;
  /**
   * The bash session: background commands and the private spill directory [a new one]; call its
   * `close()` when the session ends (kills the commands, removes the spill files).
   */
  backgroundTasks?: BackgroundTasks;
}

/** Sandbox options whose writable roots default to the workspace roots. */
function withRoots(
  sandbox: BashToolOptions['sandbox'],
  roots: readonly string[],
): BashToolOptions['sandbox'] {
  if (sandbox !== undefined && typeof sandbox === 'object' && 'wrap' in sandbox) return sandbox;
  const options = typeof sandbox === 'string' ? { mode: sandbox } : (sandbox ?? {});
  return { ...options, writableRoots: options.writableRoots ?? roots };
}

/**
 * The built-in tools, sharing one workspace (confinement to `roots` by real path) and one bash
 * session (`backgroundTasks`). The session's spill directory is readable by the read-only tools
 * and by sandboxed commands; other sessions' spill directories are refused.
 */
export function defaultTools(options: DefaultToolsOptions): AnyAgentTool[] {
  const backgroundTasks = options.backgroundTasks ?? new BackgroundTasks();
  const spillDir = options.bash?.spillDir;
  const spill =
    spillDir === undefined
      ? backgroundTasks.spillDirectory
      : new SpillDirectory({ path: spillDir });
  const workspace = new Workspace({
    cwd: options.cwd,
    ...(options.roots === undefined ? {} : { roots: options.roots }),
    readOnlyRoots: [spill.path],
    hiddenRoots: [
      ...(spill.sharedRoot === undefined ? [] : [spill.sharedRoot]),
      ...(options.hiddenRoots ?? []),
    ],
    ...(options.fs === undefined ? {} : { fs: options.fs }),
    ...(options.protectedWrites === undefined ? {} : { protectedWrites: options.protectedWrites }),
  });
  const shared = { cwd: workspace.cwd, workspace };
  // One bash: use_aws runs its commands as calls of the bash tool the model has.
  let bashTool: AnyAgentTool | undefined;
  const makers: Record<BuiltinToolName, () => AnyAgentTool> = {
    bash: () =>
      (bashTool ??= createBashTool({
        ...options.bash,
        cwd: workspace.cwd,
        backgroundTasks,
        // The sandbox lets commands write where the file tools may (the workspace roots) and
        // read this session's spill files.
        sandbox: sandboxOf(withRoots(options.bash?.sandbox, workspace.roots), workspace.cwd, spill),
      })),
    bash_output: () => createBashOutputTool({ backgroundTasks }),
    // read_file also takes Kiro's fs_read batch (Line, Directory, Search, Image operations).
    read_file: () =>
      withFsReadBatch({
        readFile: createReadFileTool({ ...options.readFile, ...shared }),
        listFiles: makers.list_files(),
        search: makers.search(),
        ...(options.readFile?.maxOutputChars === undefined
          ? {}
          : { maxOutputChars: options.readFile.maxOutputChars }),
      }),
    // write_file also takes Kiro's fs_write commands (create, str_replace, insert, append).
    write_file: () =>
      withWriteCommands({
        writeFile: createWriteFileTool(shared),
        textEditor: makers.text_editor(),
      }),
    edit_file: () => createEditFileTool({ ...options.editFile, ...shared }),
    text_editor: () => createTextEditorTool({ ...options.editFile, ...shared }),
    list_files: () =>
      createListFilesTool({
        ...shared,
        ...(options.search?.skip ? { skip: options.search.skip } : {}),
      }),
    glob: () =>
      createGlobTool({ ...shared, ...(options.search?.skip ? { skip: options.search.skip } : {}) }),
    search: () => createSearchTool({ ...options.search, ...shared }),
    // todo_write also takes Kiro's todo_list/task commands (create, complete, add, remove, …).
    todo_write: () => withTodoCommands(createTodoTool(options.todo)),
    sleep: () => createSleepTool(),
    send_user_message: () => createSendUserMessageTool(),
    notebook_edit: () => createNotebookEditTool(shared),
    think: () => createThinkTool(options.think),
    report_issue: () => createReportIssueTool(options.reportIssue),
    // The aws command runs as a call of the session's bash tool (its gate, hooks and sandbox).
    use_aws: () =>
      createUseAwsTool({
        bash: makers.bash(),
        searchPath: options.bash?.env?.PATH ?? process.env.PATH,
      }),
    knowledge: () => createKnowledgeTool({ workspace }),
  };
  const names = options.tools ?? defaultToolNames;
  if (names.includes('use_aws') && !names.includes('bash'))
    throw new AgentError(
      'defaultTools: use_aws runs its aws command as a call of the bash tool, so it needs "bash" among the tools (without bash, leave use_aws out too)',
    );
  return names.map((name) => makers[name]());
}
