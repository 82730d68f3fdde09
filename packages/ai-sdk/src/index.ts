export { type AiSdkProviderOptions, fromAiSdkModel } from './ai-sdk-provider.js';
export {
  type AiSdkTool,
  type AiSdkToolContext,
  type AiSdkToolOutput,
  type AiSdkToolsOptions,
  toAiSdkTool,
  toAiSdkTools,
} from './ai-sdk-tools.js';
