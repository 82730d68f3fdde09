export { CrashableRunJournal } from './crashable-journal.js';
export {
  createScriptedProvider,
  type ScriptedProvider,
  type ScriptedProviderOptions,
  type ScriptedStep,
  type ScriptedToolCall,
  type ScriptedTurn,
} from './scripted-provider.js';
