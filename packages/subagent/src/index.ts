export {
  type AgentToolArgs,
  type AgentToolOptions,
  createAgentTool,
} from './agent-tool.js';
export { defaultMaxConcurrentRuns } from './run-slots.js';
export {
  isSubAgentDetails,
  isSubAgentUpdateDetails,
  type SubAgentDetails,
  type SubAgentUpdateDetails,
} from './sub-agent-details.js';
export {
  type DefaultSubAgentInput,
  defaultMaxSubAgentDepth,
  defaultSubAgentInput,
  type SubAgentEventInfo,
  type SubAgentLoopOptions,
  type SubAgentOutcome,
  type SubAgentResultContent,
  type SubAgentToolOptions,
  submitResultToolName,
} from './sub-agent-options.js';
export { createSubAgentTool, isSubAgentTool, SubAgentTool } from './sub-agent-tool.js';
export {
  createSummaryTool,
  formatSummary,
  type SubAgentSummary,
  summaryToolName,
} from './summary-tool.js';
