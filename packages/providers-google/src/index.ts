export { toProviderError } from './gemini-errors.js';
export { parseToolArguments, skipThoughtSignature, toGeminiContents } from './gemini-messages.js';
export {
  findGeminiModel,
  type GeminiModelInfo,
  geminiModels,
  withGeminiCost,
} from './gemini-models.js';
export {
  buildGeminiParams,
  createGeminiProvider,
  type GeminiBudgetLevel,
  type GeminiProvider,
  type GeminiProviderOptions,
} from './gemini-provider.js';
export {
  dropAbsentNulls,
  type GeminiSchemaConversion,
  type GeminiSchemaDialect,
  toGeminiSchema,
} from './gemini-schema.js';
