export {
  compatPresets,
  detectCompatServer,
  type KnownCompatServer,
  type OpenAICompat,
  resolveCompat,
} from './compat.js';
export {
  addCost,
  getOpenAIModel,
  listOpenAIModels,
  type OpenAIModelInfo,
  type OpenAIModelPrices,
  supportsToolSearch,
} from './openai-models.js';
export {
  createOpenAIProvider,
  type OpenAIApi,
  type OpenAIProvider,
  type OpenAIProviderOptions,
} from './openai-provider.js';
export type { OpenAIProgrammaticOptions } from './responses/responses-programmatic.js';
export {
  matchesStrictSchema,
  type StrictArgumentsPlan,
  type StrictSchemaResult,
  stripAbsentNulls,
  toStrictSchema,
} from './strict-schema.js';
