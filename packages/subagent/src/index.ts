export {
  type AgentToolArgs,
  type AgentToolOptions,
  createAgentTool,
} from './agent-tool.js';
export {
  isSubAgentDetails,
  isSubAgentUpdateDetails,
  type SubAgentDetails,
  type SubAgentUpdateDetails,
} from './sub-agent-details.js';
export {
  createSubAgentTool,
  type DefaultSubAgentInput,
  defaultMaxSubAgentDepth,
  defaultSubAgentInput,
  isSubAgentTool,
  type SubAgentEventInfo,
  type SubAgentLoopOptions,
  type SubAgentOutcome,
  type SubAgentResultContent,
  SubAgentTool,
  type SubAgentToolOptions,
  submitResultToolName,
} from './sub-agent-tool.js';
export {
  createSummaryTool,
  formatSummary,
  type SubAgentSummary,
  summaryToolName,
} from './summary-tool.js';
