export {
  type AgentSessionObject,
  type AgentSessionOptions,
  type ApprovalAnswer,
  agentSession,
  type PendingApproval,
  type PromptInput,
  type PromptOutcome,
  type SessionAgentOptions,
} from './agent-session.js';
export { RestateRunJournal } from './restate-journal.js';
