export {
  type OpenAIAgentsTool,
  type OpenAIAgentsToolOutput,
  type OpenAIAgentsToolParameters,
  type OpenAIAgentsToolsOptions,
  toOpenAIAgentsTool,
  toOpenAIAgentsTools,
} from './openai-agents-tools.js';
