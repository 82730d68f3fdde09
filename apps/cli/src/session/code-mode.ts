/**
 * Code mode in the CLI (`--code-mode`, or `"codeMode"` in the user settings): the session gets a
 * `run_script` tool (`@agent/code-mode`) in which the chosen tools are async functions. The tools
 * stay directly callable too; each call a script makes goes through the session's own gate,
 * hooks and events, so a script can do nothing a direct call could not.
 */
import type { AnyAgentTool } from '@agent/core';
import type { CodeModeSetting } from '../config/code-mode.js';
import { wildcardPattern } from '../config/wildcard.js';

/** The code-mode tool's wire name. */
export const codeModeToolName = 'run_script';

/** Control tools that end or steer the run itself: called directly, never from a script. */
const notFromScripts = new Set(['exit_plan_mode', codeModeToolName]);

/** Up to this many callable tools, their TypeScript declarations are in the tool's description. */
const maxInlineDeclarations = 12;

function namePattern(pattern: string): { test(text: string): boolean } {
  return wildcardPattern(pattern);
}

/**
 * The session's `run_script` tool over the chosen tools, or undefined when the setting is off.
 * Patterns that match no tool are reported through `log`. The runtime is loaded only here: a
 * session without code mode never reads it.
 */
export async function sessionCodeModeTool(
  available: readonly AnyAgentTool[],
  setting: CodeModeSetting | undefined,
  log: (line: string) => void,
): Promise<{ tool: AnyAgentTool; callable: string[] } | undefined> {
  if (setting === undefined || setting === false) return undefined;
  const candidates = available.filter((tool) => !notFromScripts.has(tool.name));
  const patterns = setting === true ? undefined : setting.tools;
  let chosen = candidates;
  if (patterns !== undefined) {
    const matchers = patterns.map((pattern) => ({ pattern, regExp: namePattern(pattern) }));
    chosen = candidates.filter((tool) => matchers.some(({ regExp }) => regExp.test(tool.name)));
    for (const { pattern, regExp } of matchers)
      if (!candidates.some((tool) => regExp.test(tool.name)))
        log(`warning: codeMode.tools: "${pattern}" matches no tool a script can call`);
  }
  const { createCodeModeTool } = await import('@agent/code-mode');
  const tool = createCodeModeTool({
    name: codeModeToolName,
    tools: chosen,
    declarations: chosen.length > maxInlineDeclarations ? 'on-demand' : 'inline',
  });
  return { tool, callable: chosen.map((each) => each.name) };
}
