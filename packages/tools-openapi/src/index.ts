export type { OpenApiAuth, SecretSource } from './auth.js';
export {
  type OpenApiArguments,
  type OpenApiDocument,
  type OpenApiDocumentLimits,
  type OpenApiFromUrlOptions,
  type OpenApiHeaders,
  type OpenApiTool,
  OpenApiToolAdapter,
  type OpenApiToolOptions,
} from './openapi-tool-adapter.js';
export type { OpenApiOperationInfo, OperationSelector } from './operation-filter.js';
export type { OpenApiResultDetails } from './response-reader.js';
export { OpenApiSpecError, type OpenApiSpecErrorOptions } from './spec-error.js';
