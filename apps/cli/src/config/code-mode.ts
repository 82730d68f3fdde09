/**
 * The `codeMode` setting (user settings only) and `--code-mode`: off, on with every tool callable
 * from scripts, or on with the tools named. The session builds the tool (session/code-mode.ts).
 */
import { CliError } from './cli-error.js';

/** The setting: off, on with every tool callable, or on with the tools named (`*` matches any run of characters). */
export type CodeModeSetting = boolean | { tools?: string[] };

/** Checks the `codeMode` value of a settings file; a wrong one is an error naming the file and key. */
export function checkCodeModeSetting(value: unknown, path: string): CodeModeSetting {
  if (typeof value === 'boolean') return value;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new CliError(
      `${path}: "codeMode" must be true, false or { "tools": ["read_file", "glob", …] }`,
    );
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record))
    if (key !== 'tools')
      throw new CliError(`${path}: unknown codeMode setting "${key}" (known: tools)`);
  const tools = record.tools;
  if (tools === undefined) return {};
  if (
    !Array.isArray(tools) ||
    tools.some((name) => typeof name !== 'string' || !/^[a-zA-Z0-9_*-]{1,64}$/.test(name))
  )
    throw new CliError(
      `${path}: codeMode.tools must be a list of tool names (letters, digits, _ and -; * matches any run of them)`,
    );
  return { tools: tools as string[] };
}
