/**
 * Any set of `AgentTool`s served as an MCP server (`@agent/tools-mcp/serve`): over stdio, over
 * Streamable HTTP for whoever holds the bearer token, or on any SDK transport.
 */

export { foreignListener, fromThisUser, loopbackPeer } from '@agent/core/loopback';
export {
  type BearerCheckResult,
  createBearerCheck,
  generateBearerToken,
  type HttpServeAuth,
  protectedResourceMetadata,
  readBearerTokenFile,
} from './serve-auth.js';
export {
  type HttpServeOptions,
  type HttpToolServer,
  type HttpToolServerActivity,
  serveHttp,
} from './serve-http.js';
export {
  createToolServer,
  defaultMaxConcurrentCalls,
  defaultMaxQueuedCalls,
  type StdioToolServer,
  serveOn,
  serverBusyErrorCode,
  serveStdio,
  type ToolServerOptions,
} from './tool-server.js';
