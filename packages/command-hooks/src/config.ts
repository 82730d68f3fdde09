import { claudeCodeToolsWithCounterpart, claudeCodeToolsWithoutCounterpart } from '@agent/core';
import { RE2JS } from 're2js';
/**
 * The hooks configuration in Claude Code's format:
 *
 * ```json
 * { "PreToolUse": [{ "matcher": "bash|edit_file", "hooks": [{ "type": "command", "command": "./check.sh", "timeout": 30 }] }] }
 * ```
 */

/** The events a command hook can be attached to. */
export const hookEventNames = [
  'PreToolUse',
  'PostToolUse',
  'UserPromptSubmit',
  'Stop',
  'SessionStart',
] as const;

export type HookEventName = (typeof hookEventNames)[number];

/** One shell command run for an event. `timeout` is in seconds (default 60). */
export interface CommandHook {
  type: 'command';
  command: string;
  timeout?: number;
  /**
   * `false`: run outside the OS sandbox even where the `sandbox` option of `CommandHooks` puts
   * hooks in it — for a hook that never reads the workspace or runs its code (a notifier) [true].
   */
  sandbox?: boolean;
}

/**
 * Hooks run when `matcher` (a regular expression over the whole tool name; empty or `*` for all)
 * matches the tool's name or one of the names Claude Code gives it (`Bash`, `Edit|Write`, `mcp__.*`).
 */
export interface HookMatcher {
  matcher?: string;
  hooks: CommandHook[];
}

export type HooksConfig = Partial<Record<HookEventName, HookMatcher[]>>;

/** A mistake in a hooks configuration, naming where it is. */
export class HooksConfigError extends Error {
  override readonly name = 'HooksConfigError';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function unknownKeys(record: Record<string, unknown>, known: readonly string[], where: string) {
  for (const key of Object.keys(record))
    if (!known.includes(key))
      throw new HooksConfigError(`${where}: unknown key "${key}" (known: ${known.join(', ')})`);
}

/**
 * Checks a hooks configuration strictly: unknown events, keys and wrong types are errors naming
 * `where` (a file name, say) and the place in it. Matchers must be valid regular expressions.
 */
export function parseHooksConfig(value: unknown, where = 'hooks'): HooksConfig {
  if (!isObject(value)) throw new HooksConfigError(`${where} must be an object`);
  unknownKeys(value, hookEventNames, where);
  const config: HooksConfig = {};
  for (const event of hookEventNames) {
    const list = value[event];
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw new HooksConfigError(`${where}.${event} must be a list`);
    config[event] = list.map((entry, i) => {
      const at = `${where}.${event}[${i}]`;
      if (!isObject(entry)) throw new HooksConfigError(`${at} must be an object`);
      unknownKeys(entry, ['matcher', 'hooks'], at);
      const matcher = entry.matcher;
      if (matcher !== undefined) {
        if (typeof matcher !== 'string')
          throw new HooksConfigError(`${at}.matcher must be a string`);
        // `*` (Claude Code's "every tool") is not a regular expression; `''` selects every tool too.
        try {
          if (matcher !== '*') RE2JS.compile(matcher);
        } catch (error) {
          throw new HooksConfigError(
            `${at}.matcher is not a valid regular expression (RE2 syntax: no lookaround or back-references): ${(error as Error).message}`,
          );
        }
        const unmapped = unmappedClaudeCodeTools(matcher);
        if (unmapped !== undefined)
          throw new HooksConfigError(
            `${at}.matcher ${JSON.stringify(matcher)} names Claude Code's ${unmapped}, which has no counterpart among this agent's tools`,
          );
      }
      if (!Array.isArray(entry.hooks)) throw new HooksConfigError(`${at}.hooks must be a list`);
      const hooks = entry.hooks.map((hook, j): CommandHook => {
        const hat = `${at}.hooks[${j}]`;
        if (!isObject(hook)) throw new HooksConfigError(`${hat} must be an object`);
        unknownKeys(hook, ['type', 'command', 'timeout', 'sandbox'], hat);
        if (hook.type !== 'command') throw new HooksConfigError(`${hat}.type must be "command"`);
        if (typeof hook.command !== 'string' || hook.command.trim() === '')
          throw new HooksConfigError(`${hat}.command must be a non-empty string`);
        if (hook.timeout !== undefined && (typeof hook.timeout !== 'number' || !(hook.timeout > 0)))
          throw new HooksConfigError(`${hat}.timeout must be a positive number of seconds`);
        if (hook.sandbox !== undefined && typeof hook.sandbox !== 'boolean')
          throw new HooksConfigError(`${hat}.sandbox must be true or false`);
        return {
          type: 'command',
          command: hook.command,
          ...(hook.timeout === undefined ? {} : { timeout: hook.timeout as number }),
          ...(hook.sandbox === undefined ? {} : { sandbox: hook.sandbox as boolean }),
        };
      });
      return { ...(matcher === undefined ? {} : { matcher: matcher as string }), hooks };
    });
  }
  return config;
}

/** Hooks configurations merged in order: the lists of each event add up. */
export function mergeHooksConfigs(...configs: HooksConfig[]): HooksConfig {
  const merged: HooksConfig = {};
  for (const config of configs)
    for (const event of hookEventNames) {
      const list = config[event];
      if (list !== undefined) merged[event] = [...(merged[event] ?? []), ...list];
    }
  return merged;
}

/**
 * Whether a matcher selects a tool by any of its names — ours and Claude Code's (`claudeCodeNamesOf`
 * of `@agent/core`) — no matcher, `''` and `*` select every tool.
 */
export function matches(matcher: string | undefined, names: string | readonly string[]): boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return true;
  const pattern = wholeName(matcher);
  return (typeof names === 'string' ? [names] : names).some((name) => pattern.test(name));
}

// A matcher comes from a settings file, which a downloaded project can hold: on JavaScript's
// backtracking engine `(\w|\w|\w|\w|\w|\w)*!` took minutes against a 13-letter tool name, at
// load and on every tool call. RE2 (`re2js`) takes time linear in the name.
const compiled = new Map<string, RE2JS>();

/** `^(?:matcher)$` on RE2, compiled once per matcher; throws on a pattern RE2 cannot run. */
function wholeName(matcher: string): RE2JS {
  let pattern = compiled.get(matcher);
  if (pattern === undefined) {
    pattern = RE2JS.compile(`^(?:${matcher})$`);
    if (compiled.size < 1000) compiled.set(matcher, pattern);
  }
  return pattern;
}

/** The top-level alternatives of a regular expression (`Edit|Write` → `Edit`, `Write`). */
function alternatives(source: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let inClass = false;
  let start = 0;
  for (let index = 0; index < source.length; index++) {
    const c = source[index];
    if (c === '\\') index++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) {
      parts.push(source.slice(start, index));
      start = index + 1;
    }
  }
  parts.push(source.slice(start));
  return parts;
}

/**
 * A Claude Code tool with no counterpart here that some alternative of `matcher` names and
 * nothing else (`EnterPlanMode`, `Enter.*`): such a hook would never run, so it is refused.
 */
function unmappedClaudeCodeTools(matcher: string): string | undefined {
  if (matcher === '' || matcher === '*') return undefined;
  for (const alternative of alternatives(matcher)) {
    let pattern: RE2JS;
    try {
      pattern = wholeName(alternative);
    } catch {
      return undefined; // Not separable at this `|`: the whole matcher was valid, leave it.
    }
    const unmapped = claudeCodeToolsWithoutCounterpart.filter((name) => pattern.test(name));
    if (unmapped.length > 0 && !claudeCodeToolsWithCounterpart.some((name) => pattern.test(name)))
      return unmapped.join(', ');
  }
  return undefined;
}
