export {
  type McpCaller,
  type McpClientFeatures,
  type McpElicitationHandler,
  type McpLogEntry,
  type McpRequestContext,
  type McpRoot,
  type McpSamplingHandler,
  toMcpRoots,
  withDefaults,
} from './client-features.js';
export type {
  McpCustomTransportConfig,
  McpHttpTransportConfig,
  McpStdioTransportConfig,
  McpToolAdapterOptions,
  McpToolsChange,
  McpToolsChangedListener,
  McpTransportConfig,
} from './mcp-options.js';
export {
  type McpAgentTool,
  type McpConnectionStatus,
  McpToolAdapter,
} from './mcp-tool-adapter.js';
export {
  clientCredentialsProvider,
  LoopbackOAuthProvider,
  type McpClientCredentials,
  type McpOAuthOptions,
} from './oauth.js';
export { type McpToolResultDetails, toToolResult } from './result-mapping.js';
export {
  fileTokenStore,
  type McpStoredAuth,
  type McpTokenStore,
  memoryTokenStore,
} from './token-store.js';
export { mcpToolWireName, sanitizeNamePart } from './tool-names.js';
export { toToolParameters } from './tool-schema.js';
