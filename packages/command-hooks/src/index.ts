export { CommandHooks, type CommandHooksOptions, type HookVerdict } from './command-hooks.js';
export {
  type CommandHook,
  type HookEventName,
  type HookMatcher,
  type HooksConfig,
  HooksConfigError,
  hookEventNames,
  matches,
  mergeHooksConfigs,
  parseHooksConfig,
} from './config.js';
export type {
  HookCommand,
  HookLimitEvents,
  HookSandbox,
  WrappedHookCommand,
} from './hook-sandbox.js';
export { type CommandOutcome, type RunCommandOptions, runCommand } from './run-command.js';
