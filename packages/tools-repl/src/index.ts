export {
  type CommandWrapper,
  type ReplLanguage,
  type ReplLimitEvents,
  type ReplOutcome,
  ReplResetError,
  ReplSession,
  type ReplSessionOptions,
  type WrappableCommand,
  type WrappedReplCommand,
} from './repl-session.js';
export {
  createReplTools,
  findExecutable,
  type ReplTools,
  type ReplToolsOptions,
} from './repl-tools.js';
