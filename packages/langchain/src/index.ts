export {
  type LangChainTool,
  type LangChainToolContent,
  type LangChainToolsOptions,
  toLangChainTool,
  toLangChainTools,
} from './langchain-tools.js';
