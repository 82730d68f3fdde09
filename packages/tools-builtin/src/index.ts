export { detectFileKind, type FileKind } from '@agent/core';
export type { AtomicWriteGuard } from './atomic-write.js';
export {
  type BackgroundTask,
  BackgroundTasks,
  type BackgroundTasksOptions,
  defaultMaxBackgroundTasks,
} from './background-tasks.js';
export { type BashArgs, createBashTool } from './bash.js';
export type { BashDetails } from './bash-output-format.js';
export {
  type BashOutputArgs,
  type BashOutputToolOptions,
  createBashOutputTool,
} from './bash-output-tool.js';
export {
  type BashRunSettings,
  type BashToolOptions,
  defaultMaxSpillBytes,
  defaultSpillMaxAgeMs,
  sandboxOf,
} from './bash-settings.js';
export {
  type BuiltinToolName,
  type DefaultToolsOptions,
  defaultToolNames,
  defaultTools,
  kiroToolNames,
} from './default-tools.js';
export {
  applyEdit,
  createEditFileTool,
  createTextEditorTool,
  defaultMaxEditBytes,
  type EditFileArgs,
  type EditFileDetails,
  type EditFileToolOptions,
  type EditOutcome,
  type TextEditorArgs,
} from './edit-file.js';
export type { FileToolOptions } from './file-tool-options.js';
export {
  type FsReadBatchDetails,
  type FsReadBatchTools,
  type FsReadOperation,
  withFsReadBatch,
} from './fs-read-batch.js';
export { withWriteCommands } from './fs-write-commands.js';
export { createGlobTool, type GlobArgs, type GlobDetails, type GlobToolOptions } from './glob.js';
export { createKnowledgeTool, type KnowledgeArgs, type KnowledgeToolOptions } from './knowledge.js';
export {
  createListFilesTool,
  type ListFilesArgs,
  type ListFilesDetails,
  type ListFilesToolOptions,
} from './list-files.js';
export {
  createNotebookEditTool,
  type NotebookEditArgs,
  type NotebookEditDetails,
  type NotebookRenderLimits,
  parseNotebook,
  renderNotebook,
} from './notebook.js';
export {
  OutputBuffer,
  type OutputBufferOptions,
  type OutputSnapshot,
  removeStaleSpillFiles,
  type SpillBudget,
} from './output-buffer.js';
export { isPathInside } from './path-inside.js';
export type {
  ProcessOperations,
  ProcessOutcome,
} from './process-group.js';
export { type ProtectedWrites, protectedWriteReason } from './protected-writes.js';
export {
  createReadFileTool,
  type ReadFileArgs,
  type ReadFileDetails,
  type ReadFileToolOptions,
} from './read-file.js';
export {
  createReportIssueTool,
  type IssueDraft,
  type ReportIssueArgs,
  type ReportIssueToolOptions,
} from './report-issue.js';
export {
  createSearchTool,
  maxSearchLineChars,
  resolveSearchEngine,
  type SearchArgs,
  type SearchDetails,
  type SearchToolOptions,
} from './search.js';
export {
  createRipgrepEngine,
  createTypeScriptEngine,
  findRipgrep,
  type RipgrepEngineOptions,
  type SearchEngine,
  type SearchFileResult,
  type SearchLine,
  type SearchOutputMode,
  type SearchQuery,
  type TypeScriptEngineOptions,
} from './search-engines.js';
export {
  analyzeShellCommand,
  type ShellAnalysis,
  shellPermissionSubjects,
} from './shell-analysis.js';
export {
  type ParsedShellCommand,
  parseShellCommand,
  type ShellCommand,
  type ShellRedirect,
} from './shell-parser.js';
export {
  createSendUserMessageTool,
  createSleepTool,
  type SleepToolOptions,
  type UserMessageDetails,
} from './small-tools.js';
export {
  defaultMaxSessionSpillBytes,
  defaultSpillDir,
  SpillDirectory,
  type SpillDirectoryOptions,
} from './spill-dir.js';
export { createThinkTool, type ThinkDetails, type ThinkToolOptions } from './think.js';
export {
  createTodoTool,
  renderTodos,
  type TodoItem,
  type TodoStatus,
  type TodoTool,
  type TodoToolOptions,
  type TodoWriteArgs,
  type TodoWriteDetails,
} from './todo.js';
export { type TodoCommand, withTodoCommands } from './todo-commands.js';
export {
  awsCommandLine,
  createUseAwsTool,
  type UseAwsArgs,
  type UseAwsToolOptions,
} from './use-aws.js';
export { defaultSkippedDirectories } from './walk.js';
export {
  type FileSystemOperations,
  nodeFileSystem,
  type PathAccess,
  resolveRealPath,
  Workspace,
  type WorkspaceOptions,
} from './workspace.js';
export {
  createWriteFileTool,
  type WriteFileArgs,
  type WriteFileDetails,
  type WriteFileToolOptions,
} from './write-file.js';
