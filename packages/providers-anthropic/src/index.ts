export { parseToolArguments } from '@agent/core';
export { toProviderError } from './anthropic-errors.js';
export { toAnthropicMessages } from './anthropic-messages.js';
export {
  type AnthropicModelInfo,
  anthropicModels,
  findAnthropicModel,
  withAnthropicCost,
} from './anthropic-models.js';
export type {
  AnthropicCodeExecutionVersion,
  AnthropicProgrammaticOptions,
} from './anthropic-programmatic.js';
export {
  type AnthropicProvider,
  type AnthropicProviderOptions,
  type AnthropicThinkingLevel,
  createAnthropicProvider,
} from './anthropic-provider.js';
export { buildAnthropicParams } from './anthropic-request.js';
