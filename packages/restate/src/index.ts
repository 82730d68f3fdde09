export {
  type AgentSessionObject,
  type AgentSessionOptions,
  type ApprovalAnswer,
  agentSession,
  type MessagesInput,
  type PendingApproval,
  type PromptInput,
  type PromptOutcome,
  type SessionAgentOptions,
} from './agent-session.js';
export { RestateRunJournal, type RestateRunJournalOptions } from './restate-journal.js';
