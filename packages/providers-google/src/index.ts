export { parseToolArguments } from '@agent/core';
export { toProviderError } from './gemini-errors.js';
export { skipThoughtSignature, toGeminiContents } from './gemini-messages.js';
export {
  findGeminiModel,
  type GeminiModelInfo,
  geminiModels,
  withGeminiCost,
} from './gemini-models.js';
export {
  createGeminiProvider,
  type GeminiBudgetLevel,
  type GeminiProvider,
  type GeminiProviderOptions,
} from './gemini-provider.js';
export { buildGeminiParams } from './gemini-request.js';
export {
  dropAbsentNulls,
  type GeminiSchemaConversion,
  type GeminiSchemaDialect,
  toGeminiSchema,
} from './gemini-schema.js';
