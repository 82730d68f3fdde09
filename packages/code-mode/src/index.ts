export {
  type CodeModeCall,
  type CodeModeDetails,
  type CodeModeLimits,
  type CodeModeToolOptions,
  createCodeModeTool,
} from './code-mode-tool.js';
export {
  callExpression,
  type DeclarationOptions,
  toolDeclaration,
  toolDeclarations,
} from './declarations.js';
export { compileQuickJs, type ScriptFailure } from './script-runtime.js';
export { warmUpCodeMode } from './warm-up.js';
