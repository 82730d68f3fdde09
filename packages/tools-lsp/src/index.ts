export { type CodeArgs, createCodeTool } from './code-tool.js';
export { LspError, type LspErrorCode, type LspErrorOptions } from './errors.js';
export {
  defaultLanguageServers,
  type FindServerOptions,
  findServerExecutable,
  type KnownLanguage,
  type LanguageServerConfig,
  pythonServer,
  type ServerStartContext,
  typescriptMajorVersion,
  typescriptNativeServer,
  typescriptServer,
} from './language-servers.js';
export { createLspTools, type LspToolsOptions, lspToolNames } from './lsp-tools.js';
export {
  type FileChangeNotice,
  type FileDiagnostics,
  LspWorkspace,
  type LspWorkspaceOptions,
  type RenamePreview,
} from './lsp-workspace.js';
export { positionOf, type SymbolLocator } from './positions.js';
export type {
  CommandWrapper,
  ServerLimitEvents,
  WrappableCommand,
  WrappedServerCommand,
} from './server-process.js';
