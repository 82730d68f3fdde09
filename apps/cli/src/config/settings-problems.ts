/**
 * Checking a settings file key by key, so that what cannot be used is left out and named while
 * the rest applies. A project's file (a cloned repository's, or one written for a newer version)
 * must never stop the CLI: every problem in it is a warning. The user's own file: an unknown key
 * is a warning too (a newer version's), a value that cannot be used, or a typo of a known key,
 * stays an error.
 */
import { hookEventNames, parseHooksConfig } from '@agent/command-hooks';
import { AgentError, PermissionPolicy } from '@agent/core';
import { CliError } from './cli-error.js';
import { checkSettings, type SettingsFile, settingsKeys } from './settings-file.js';
import { closestWord } from './suggest.js';

/** Something in a settings file that was left out: an unknown key, or a value that cannot be used. */
export interface SettingsProblem {
  /**
   * `unknown`: a key this version does not know (a newer version's); `invalid`: a value that
   * cannot be used, or an unknown key a letter or two from a known one (a typo: `"alow"`, a
   * `"deny"` at the top — in the user's file a rule silently dropped).
   */
  kind: 'unknown' | 'invalid';
  /** Names the file and the key (`…/settings.json: permissions.allow[0] must be a string`). */
  message: string;
  /** What was done about it, for a warning (`it is left out`). */
  effect: string;
}

/** A settings file's usable part, and what was left out of it. */
export interface CheckedSettingsFile {
  file: SettingsFile;
  problems: SettingsProblem[];
  /**
   * Tools that ask first in place of PreToolUse guards that could not be used (`*`: every tool),
   * where the folder is trusted — only there would the project's guards have run.
   */
  guardAsks: string[];
}

const ruleKinds = ['allow', 'ask', 'deny'] as const;
const permissionKeys = new Set<string>([...ruleKinds, 'defaultMode', 'keepGrants']);

const ignored = 'it is ignored';

function invalid(message: string): SettingsProblem {
  return { kind: 'invalid', message, effect: 'it is left out' };
}

/** Whether an unknown key is a letter or two from a known one. */
function typoOf(key: string, known: readonly string[]): boolean {
  return closestWord(key, known) !== undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Runs a check that throws `CliError` naming what is wrong; its message, or undefined when fine. */
function problemOf(check: () => unknown): string | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    if (error instanceof CliError) return error.message;
    throw error;
  }
}

/**
 * A tool pattern a deny rule that cannot be used could have meant (`Bash` of `Bash(rm -rf`), or
 * `*` when none can be read from it: its tools ask first instead, as denying is what it wanted.
 */
function askInsteadOf(rule: unknown): string {
  if (typeof rule !== 'string') return '*';
  const open = rule.indexOf('(');
  const head = (open === -1 ? rule : rule.slice(0, open)).trim();
  if (head === '' || head === '*') return '*';
  try {
    new PermissionPolicy({ ask: [head] });
    return head;
  } catch (error) {
    if (AgentError.isInstance(error)) return '*';
    throw error;
  }
}

/** The rule lists and keys of `permissions`, each entry checked on its own. */
function checkPermissions(
  value: unknown,
  path: string,
  problems: SettingsProblem[],
): NonNullable<SettingsFile['permissions']> {
  const permissions: NonNullable<SettingsFile['permissions']> = { allow: [], ask: [], deny: [] };
  if (!isRecord(value)) {
    problems.push(invalid(`${path}: "permissions" must be an object`));
    return permissions;
  }
  for (const [key, item] of Object.entries(value)) {
    if (!permissionKeys.has(key)) {
      problems.push({
        kind: typoOf(key, [...permissionKeys]) ? 'invalid' : 'unknown',
        message:
          problemOf(() => checkSettings({ permissions: { [key]: item } }, path)) ??
          `${path}: unknown permission setting "${key}"`,
        effect: ignored,
      });
      continue;
    }
    if (key === 'allow' || key === 'ask' || key === 'deny') {
      const list = Array.isArray(item) ? item : [item];
      if (!Array.isArray(item))
        problems.push({
          kind: 'invalid',
          message: `${path}: permissions.${key} must be a list of strings`,
          effect: 'it is read as a list of one',
        });
      list.forEach((rule, index) => {
        const why =
          typeof rule !== 'string'
            ? `${path}: permissions.${key}[${index}] must be a string, not ${rule === null ? 'null' : typeof rule}`
            : problemOf(() => checkSettings({ permissions: { [key]: [rule] } }, path))?.replace(
                `permissions.${key}[0]`,
                `permissions.${key}[${index}]`,
              );
        if (why === undefined) {
          permissions[key]?.push(rule as string);
          return;
        }
        if (key !== 'deny') {
          problems.push(invalid(why));
          return;
        }
        // A deny rule that cannot be read must not widen what runs: what it could have matched asks.
        const ask = askInsteadOf(rule);
        permissions.ask?.push(ask);
        problems.push({
          kind: 'invalid',
          message: why,
          effect: `so that it denies no less, ${ask === '*' ? 'every tool asks' : `${ask} asks`} first (an ask rule in its place) until it is fixed`,
        });
      });
      continue;
    }
    const why = problemOf(() => {
      const checked = checkSettings({ permissions: { [key]: item } }, path).permissions;
      if (key === 'defaultMode' && checked?.defaultMode !== undefined)
        permissions.defaultMode = checked.defaultMode;
      if (key === 'keepGrants' && checked?.keepGrants !== undefined)
        permissions.keepGrants = checked.keepGrants;
    });
    if (why !== undefined) problems.push(invalid(why));
  }
  return permissions;
}

/** `env`, each variable on its own. */
function checkEnv(value: unknown, path: string, problems: SettingsProblem[]) {
  if (!isRecord(value)) {
    problems.push(invalid(`${path}: "env" must map names to strings`));
    return undefined;
  }
  const env: Record<string, string> = {};
  for (const [name, item] of Object.entries(value)) {
    // Defined, not assigned: a variable named `__proto__` is a variable like any other.
    if (typeof item === 'string')
      Object.defineProperty(env, name, {
        value: item,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else problems.push(invalid(`${path}: env.${name} must be a string`));
  }
  return env;
}

/**
 * The tools a PreToolUse entry that cannot be used guards: the names of its matcher (`Bash`,
 * `Edit|Write`), or `*` when it has none, or one that is no plain list of tool names (a regular
 * expression, not a string) — those tools ask first instead, as its guard no longer answers.
 */
export function guardedBy(entry: unknown): string[] {
  const matcher = isRecord(entry) ? entry.matcher : undefined;
  if (typeof matcher !== 'string') return ['*'];
  const names = matcher.split('|').map((name) => name.trim());
  if (names.some((name) => !/^[A-Za-z][\w-]*$/.test(name))) return ['*'];
  return names.every((name) => askInsteadOf(name) === name) ? names : ['*'];
}

/** The problem of a PreToolUse guard left out: its tools ask first (`asks`), said in its effect. */
function guardProblem(message: string, asks: string[]): SettingsProblem {
  const who = asks.includes('*')
    ? 'every tool asks'
    : `${asks.join(', ')} ${asks.length === 1 ? 'asks' : 'ask'}`;
  return {
    kind: 'invalid',
    message,
    effect: `it is left out; in a trusted folder, so that no call runs unguarded, ${who} first (an ask rule in its place) until it is fixed`,
  };
}

/**
 * `hooks`, each entry of each event on its own; `asks` gets the tools whose PreToolUse guard was
 * left out (a guard that is not run must not let the calls it answers for run unasked).
 */
function checkHooks(value: unknown, path: string, problems: SettingsProblem[], asks: string[]) {
  const where = `${path}: hooks`;
  const leftOut = (why: string) => problems.push(invalid(why));
  const guardLeftOut = (why: string, tools: string[]) => {
    asks.push(...tools);
    problems.push(guardProblem(why, tools));
  };
  if (!isRecord(value)) {
    guardLeftOut(`${where} must be an object`, ['*']);
    return undefined;
  }
  const hooks: Record<string, unknown[]> = {};
  for (const [event, entries] of Object.entries(value)) {
    const single = problemOf(() => wrapHooks(() => parseHooksConfig({ [event]: [] }, where)));
    if (single !== undefined) {
      // `PreToolUs`, `preToolUse`: a guard under a name a letter or two off (an empty list holds none).
      const guardTypo =
        closestWord(event, ['PreToolUse']) !== undefined || /^pre.?tool/i.test(event);
      if (guardTypo && !(Array.isArray(entries) && entries.length === 0))
        guardLeftOut(single, ['*']);
      else
        problems.push({
          kind: typoOf(event, hookEventNames) ? 'invalid' : 'unknown',
          message: single,
          effect: ignored,
        });
      continue;
    }
    const guards = event === 'PreToolUse';
    if (!Array.isArray(entries)) {
      if (guards) guardLeftOut(`${where}.${event} must be a list`, ['*']);
      else leftOut(`${where}.${event} must be a list`);
      continue;
    }
    const kept: unknown[] = [];
    entries.forEach((entry, index) => {
      const why = problemOf(() => wrapHooks(() => parseHooksConfig({ [event]: [entry] }, where)));
      if (why === undefined) kept.push(entry);
      else {
        const message = why.replace(`${event}[0]`, `${event}[${index}]`);
        if (guards) guardLeftOut(message, guardedBy(entry));
        else leftOut(message);
      }
    });
    if (kept.length > 0) hooks[event] = kept;
  }
  return parseHooksConfig(hooks, where);
}

function wrapHooks(parse: () => unknown): void {
  try {
    parse();
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error));
  }
}

/**
 * What a project settings file that cannot be read at all (not JSON, not an object, not a file)
 * leaves: nothing of it is used, and in a trusted folder every tool asks first — the PreToolUse
 * guards and deny rules it held are unknown, and the user relied on them when trusting it. In an
 * untrusted folder it is as if there were no file: its guards would not have run, and its deny
 * rules only narrowed what the user allows anyway.
 */
export const unreadableGuardAsks: readonly string[] = ['*'];

/** The effect of an unreadable project settings file, for its warning. */
export const unreadableEffect =
  'it is not used; in a trusted folder, so that the deny rules and PreToolUse guards it may hold are not lost, every tool asks first until it is fixed';

/**
 * Checks a settings file key by key (`checkSettings` on each): an unknown key, or a value that
 * cannot be used, is a problem and left out; the rest is kept. Rule lists, `env` and `hooks` are
 * checked entry by entry, and a deny rule that cannot be used leaves an ask rule in its place.
 * `mcpServers` is kept as written (its servers are parsed one by one later).
 */
export function checkSettingsByKey(value: unknown, path: string): CheckedSettingsFile {
  const problems: SettingsProblem[] = [];
  if (!isRecord(value))
    return {
      file: {},
      problems: [
        { kind: 'invalid', message: `${path} must hold a JSON object`, effect: unreadableEffect },
      ],
      guardAsks: [...unreadableGuardAsks],
    };
  const file: SettingsFile = {};
  const guardAsks: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    if (!settingsKeys.has(key)) {
      const why = problemOf(() => checkSettings({ [key]: item }, path));
      const typo = typoOf(key, [...settingsKeys]) || permissionKeys.has(key);
      problems.push({
        kind: typo ? 'invalid' : 'unknown',
        message: why ?? `${path}: unknown setting "${key}"`,
        effect: ignored,
      });
      continue;
    }
    if (key === 'permissions') file.permissions = checkPermissions(item, path, problems);
    else if (key === 'env') {
      const env = checkEnv(item, path, problems);
      if (env !== undefined) file.env = env;
    } else if (key === 'hooks') {
      const hooks = checkHooks(item, path, problems, guardAsks);
      if (hooks !== undefined) file.hooks = hooks;
    } else if (key === 'mcpServers') file.mcpServers = item as Record<string, unknown>;
    else {
      const why = problemOf(() => {
        const checked = checkSettings({ [key]: item }, path) as Record<string, unknown>;
        if (checked[key] !== undefined) (file as Record<string, unknown>)[key] = checked[key];
      });
      if (why !== undefined) problems.push(invalid(why));
    }
  }
  return { file, problems, guardAsks: [...new Set(guardAsks)] };
}
