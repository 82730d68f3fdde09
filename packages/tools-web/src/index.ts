export {
  type ConvertHtmlOptions,
  type ConvertHtmlResult,
  convertHtml,
  defaultHtmlWorkerUrl,
} from './html-conversion.js';
export { decodeHtmlEntities } from './html-entities.js';
export {
  type HtmlToMarkdownOptions,
  type HtmlToMarkdownResult,
  htmlToMarkdown,
} from './html-to-markdown.js';
export { htmlToText } from './html-to-text.js';
export { privateAddressReason } from './network-guard.js';
export {
  createWebFetchTool,
  type WebFetchArgs,
  type WebFetchDetails,
  type WebFetchFormat,
  type WebFetchToolOptions,
} from './web-fetch.js';
export {
  createWebSearchTool,
  onDomain,
  searchBackend,
  type WebSearchArgs,
  type WebSearchBackend,
  type WebSearchResult,
  type WebSearchToolOptions,
  webSearchBackendFromEnv,
} from './web-search.js';
