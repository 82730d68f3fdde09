export {
  type CommandWrapper,
  type ReplLanguage,
  type ReplOutcome,
  ReplResetError,
  ReplSession,
  type ReplSessionOptions,
  type WrappableCommand,
} from './repl-session.js';
export {
  createReplTools,
  findExecutable,
  type ReplTools,
  type ReplToolsOptions,
} from './repl-tools.js';
