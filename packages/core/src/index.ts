export {
  Agent,
  type AgentInput,
  type AgentRun,
  type AgentRunResult,
  type AgentSnapshot,
  type ContextUsage,
  type RunAgentOptions,
  type RunOptions,
  runAgent,
} from './agent.js';
export type { AgentEvent, AgentEventType, AgentStopReason } from './agent-events.js';
export type {
  AgentHooks,
  AgentOptions,
  BeforeToolExecutionDecision,
  PermissionDecision,
  PermissionGate,
  PermissionRequest,
  ToolCallInfo,
} from './agent-options.js';
export { applyStreamEvent } from './assistant-stream.js';
export {
  type ClaudeCodeRuleOptions,
  claudeCodeNamesOf,
  claudeCodeRule,
  claudeCodeToolsWithCounterpart,
  claudeCodeToolsWithoutCounterpart,
} from './claude-code-names.js';
export {
  type Compaction,
  type CompactionFiles,
  type CompactionOptions,
  type CompactionOutcome,
  type CompactionReason,
  compactionSummaryPreamble,
} from './compaction.js';
export {
  type ConfigSetting,
  type ConfigToolsOptions,
  type ConfigValue,
  createConfigTools,
} from './config-tools.js';
export { describeConnectionFailure, isConnectionFailure } from './connection-errors.js';
export {
  estimateMessageTokens,
  estimateRequestTokens,
  estimateTextTokens,
} from './context-estimate.js';
export { isContextOverflowText } from './context-overflow.js';
export {
  type CredentialFilterOptions,
  type CredentialRedactorOptions,
  type CredentialRule,
  type CredentialStreamRedactor,
  credentialFreeEnvironment,
  credentialNameRules,
  credentialRedactor,
  credentialRuleOf,
  credentialStreamRedactor,
  credentialValueRules,
  type EnvironmentRecord,
  harmlessVariableNames,
  isCredentialVariable,
  withheldVariableNames,
} from './credential-environment.js';
export { descriptiveHeaderNames, isCredentialHeader } from './credential-headers.js';
export { looksLikeRandomSecret, randomValueRule } from './credential-random-value.js';
export { urlWithoutCredentials } from './credential-url.js';
export {
  type DefinedTool,
  type DefineToolConfig,
  defineTool,
  validateWithZod,
  zodToJsonSchema,
} from './define-tool.js';
export {
  AgentError,
  type AgentErrorOptions,
  errorMessage,
  ProviderError,
  type ProviderErrorOptions,
  RunLimitError,
  ToolError,
  type ToolErrorKind,
  type ToolErrorOptions,
} from './errors.js';
export { notAnEventStream } from './event-stream-check.js';
export { type ExecuteToolOptions, executeTool } from './execute-tool.js';
export { steeringSkipMessage } from './execute-tool-calls.js';
export { detectFileKind, type FileKind } from './file-kind.js';
export {
  createIntrospectTool,
  type IntrospectArgs,
  type IntrospectDetails,
  type IntrospectToolOptions,
} from './introspect-tool.js';
export { inlineJsonSchema, type JsonSchema, type JsonSchemaObject } from './json-schema.js';
export { repairPattern } from './json-schema-repair.js';
export { jsonSchemaValidationProblem, validateWithJsonSchema } from './json-schema-validation.js';
export type { LoopDetectionOptions, ToolIdentity } from './loop-detector.js';
export {
  type AssistantContent,
  type AssistantMessage,
  addUsage,
  type Citation,
  emptyUsage,
  type ImageContent,
  type JsonContent,
  jsonContentAsText,
  jsonContentText,
  type Message,
  messageText,
  type OpaqueContent,
  type StopReason,
  type TextContent,
  type ThinkingContent,
  type ToolCallContent,
  type ToolResultContent,
  type ToolResultMessage,
  textContent,
  toolCallsOf,
  toolResultText,
  type Usage,
  type UserContent,
  type UserMessage,
  userMessage,
} from './messages.js';
export { findModelByPrefix, type ModelInfo, type ModelPricing, withCost } from './model-pricing.js';
export { setOwnProperty } from './own-property.js';
export { type PathPatternOutcome, resolvePathPattern } from './path-rules.js';
export {
  type ApprovalAnswer,
  type ApprovalContext,
  type ApprovalDecision,
  createPermissionGate,
  matchesSubjectPattern,
  type PermissionApprover,
  type PermissionDecider,
  type PermissionEvaluation,
  type PermissionGrant,
  type PermissionMode,
  type PermissionOutcome,
  PermissionPolicy,
  type PermissionPolicyOptions,
  type PermissionQuery,
  type PolicyTool,
} from './permissions.js';
export {
  composePrepareArguments,
  type RenameArgumentsOptions,
  renameArguments,
} from './prepare-arguments.js';
export type {
  DeferredToolDefinitions,
  HostedTool,
  Provider,
  ProviderRequest,
  ProviderStreamOptions,
  StreamEvent,
  ThinkingLevel,
  ToolChoice,
} from './provider.js';
export {
  abortError,
  httpErrorDetail,
  parseToolArguments,
  readEnv,
  tokenCount,
  usableApiKey,
} from './provider-kit.js';
export { ResourceLocks, sharedResourceLocks } from './resource-locks.js';
export { clipText, clipToolResultMessage } from './result-budget.js';
export {
  abortableDelay,
  defaultIdleTimeoutMs,
  isRetryableStatus,
  type RetryAttempt,
  type RetryDelayOptions,
  type RetryOptions,
  retryDelayMs,
} from './retry.js';
export {
  type RetryHints,
  RetryingStream,
  type RetryingStreamOptions,
  type StreamDriver,
} from './retrying-stream.js';
export {
  type InheritedRunLimits,
  type ParentRun,
  RunBudget,
  type RunBudgetLimits,
  type RunContext,
} from './run-context.js';
export {
  interruptedCallMessage,
  isRepeatable,
  MemoryRunJournal,
  type RunJournal,
  type RunStep,
  type RunStepValues,
  runStepKey,
  type StepAttempt,
  toolCallFingerprint,
} from './run-journal.js';
export { type SameOriginFetchOptions, sameOriginFetch } from './same-origin-fetch.js';
export { fitToolDefinition } from './schema-budget.js';
export {
  hideSecretsInError,
  hideSecretsInResult,
  type SentSecret,
  secretHider,
} from './secret-echo.js';
export {
  StaticToolExecutor,
  type StaticToolHandler,
  type StaticToolOptions,
} from './static-tool-executor.js';
export {
  assertValidStrategy,
  batched,
  parallel,
  sequential,
  type ToolExecutionStrategy,
} from './strategy.js';
export {
  createStructuredOutputTool,
  type StructuredOutputOptions,
  structuredOutputToolName,
} from './structured-output.js';
export { oneLineText, terminalSafe } from './terminal-safe.js';
export {
  type AgentTool,
  type AnyAgentTool,
  normalisePermissionSubjects,
  type PathDenialCheck,
  type PathFamily,
  type PermissionSubjectsResult,
  type PermissionTier,
  type ToolContext,
  type ToolDefinition,
  type ToolPathAccess,
  type ToolPolicy,
  type ToolResult,
  type TouchedPaths,
  textResult,
  toolNamePattern,
  toToolDefinition,
  type ValidationIssue,
  type ValidationResult,
} from './tool.js';
export { answerableToolCalls, unnamedToolCall } from './tool-call-ids.js';
export {
  deferTools,
  estimateDefinitionTokens,
  type ToolLookup,
  type ToolSearchData,
  type ToolSearchDetails,
  type ToolSearchOptions,
} from './tool-catalogue.js';
export { matchesToolPattern, ToolRegistry } from './tool-registry.js';
export {
  type ConversationKey,
  createToolRunner,
  type NeedsApprovalOptions,
  type ToolRunner,
  type ToolRunnerOptions,
} from './tool-runner.js';
export {
  type TermAssociate,
  ToolSearchAssociations,
} from './tool-search-associations.js';
export {
  searchTerms,
  type ToolSearchEmbeddings,
  ToolSearchIndex,
  type ToolSearchIndexOptions,
  type ToolSearchMatch,
} from './tool-search-index.js';
export {
  fenceUntrusted,
  neutraliseUntrustedJson,
  neutraliseUntrustedMarkers,
  type UntrustedFence,
  type UntrustedSourceKind,
  unfenceUntrusted,
  untrustedFence,
  untrustedJsonNote,
  untrustedMarkerReplacement,
  untrustedNote,
  untrustedPhrase,
  withoutUntrustedMarks,
} from './untrusted-content.js';
export { formatIssuePath, formatValidationIssues } from './validation.js';
