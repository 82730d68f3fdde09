// One settings file's format (what it may hold) and its check: unknown keys and wrong types are
// errors naming the file and the key. Reading the files and merging them is `settings.ts`.
import { type HooksConfig, HooksConfigError, parseHooksConfig } from '@agent/command-hooks';
import { AgentError, type PermissionMode, PermissionPolicy } from '@agent/core';
import type { SandboxMode } from '@agent/sandbox';
import {
  type HooksSandboxSetting,
  type ProviderName,
  type SandboxProtectSettings,
  type ServeLimits,
  serveLimitFlags,
} from './args.js';
import { CliError } from './cli-error.js';
import { type CodeModeSetting, checkCodeModeSetting } from './code-mode.js';
import { closestWord, peerMode } from './suggest.js';
import { checkToolItems, ToolListError } from './tool-choice.js';

/** What a settings file may hold. */
export interface SettingsFile {
  permissions?: {
    allow?: string[];
    ask?: string[];
    deny?: string[];
    defaultMode?: PermissionMode;
    /** A resumed session gets its "always" grants back. */
    keepGrants?: boolean;
  };
  model?: string;
  provider?: ProviderName;
  sandbox?: SandboxMode;
  mcpServers?: Record<string, unknown>;
  env?: Record<string, string>;
  /** Command hooks in Claude Code's format (see `@agent/command-hooks`). */
  hooks?: HooksConfig;
  /** Where the hooks run in the OS sandbox (user settings only) [untrusted-folders]. */
  hooksSandbox?: HooksSandboxSetting;
  /** The network of the hooks' sandbox (user settings only) [off]. */
  hooksSandboxNetwork?: 'on' | 'off';
  /**
   * What the bash sandbox keeps read-only inside the workspace (user settings only): `git: false`
   * lets commands commit, `startupFiles: false` lets them edit the home's startup files,
   * `autoRunFiles: false` lets them edit `.vscode`, `.idea`, `.devcontainer`… [all true].
   */
  sandboxProtect?: SandboxProtectSettings;
  /** Credential variables the tools' processes get anyway (user settings only). */
  passEnv?: string[];
  /**
   * Hosts whose loopback or private addresses web_fetch may reach (user settings only):
   * `["localhost", "docs.intranet"]`. Every other private address stays refused.
   */
  webFetchPrivateHosts?: string[];
  /** Seconds an MCP server has to start and answer (`--mcp-timeout` wins). */
  mcpTimeout?: number;
  /**
   * `agent mcp serve`'s caps (user settings only): `{ "maxConcurrentCalls": 16,
   * "maxQueuedCalls": 64, "maxPipelinedRequests": 32 }`; each flag wins over its key.
   */
  mcpServe?: ServeLimits;
  /** How long session files are kept (user settings only). */
  sessions?: SessionRetention;
  /** Context compaction (user settings only): `false`, or the window, threshold and tokens kept. */
  compaction?: CompactionSettings;
  /** Code mode (user settings only): `true`, or `{ "tools": [names or patterns] }` callable from scripts. */
  codeMode?: CodeModeSetting;
  /** Which tools, as `--tools` takes them (`["default", "kiro"]`); a project file may only remove (`["-bash", "-mcp__github"]`). */
  tools?: string[];
}

/** The `compaction` setting: off, or what to tell core's compaction (see its README). */
export type CompactionSettings =
  | false
  | { contextWindow?: number; threshold?: number; keepRecentTokens?: number };

/** How long the files under `$AGENT_HOME/sessions` are kept; older ones are removed at start. */
export interface SessionRetention {
  /** Days since a session was last written [30]. */
  keepDays?: number;
  /** The newest this many per workspace [no limit]. */
  keepPerWorkspace?: number;
}

const modes = ['default', 'read-only', 'workspace-write', 'full-access', 'plan'];
const providers = ['anthropic', 'openai', 'google'];
const sandboxModes = ['auto', 'required', 'off'];
const hooksSandboxSettings = ['untrusted-folders', 'always', 'off'];
/** The keys a settings file may hold at its top. */
export const settingsKeys: ReadonlySet<string> = new Set([
  'permissions',
  'model',
  'provider',
  'sandbox',
  'mcpServers',
  'env',
  'hooks',
  'hooksSandbox',
  'hooksSandboxNetwork',
  'sandboxProtect',
  'passEnv',
  'webFetchPrivateHosts',
  'mcpTimeout',
  'mcpServe',
  'sessions',
  'compaction',
  'codeMode',
  'tools',
  '$schema',
]);
const sessionKeys = new Set(['keepDays', 'keepPerWorkspace']);
const permissionKeys = new Set(['allow', 'ask', 'deny', 'defaultMode', 'keepGrants']);

function stringList(value: unknown, where: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))
    throw new CliError(`${where} must be a list of strings`);
  return value as string[];
}

function oneOf<T extends string>(
  value: unknown,
  allowed: readonly string[],
  where: string,
): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !allowed.includes(value))
    throw new CliError(
      `${where} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`,
    );
  return value as T;
}

/**
 * A file's rule list, each rule checked as the policy will read it (ours, or Claude Code's
 * `Bash(npm run:*)`, `Read(./.env)`…): one that cannot be used is an error naming file and key.
 */
function permissionRules(value: unknown, kind: 'allow' | 'ask' | 'deny', path: string): string[] {
  const rules = stringList(value, `${path}: permissions.${kind}`);
  rules.forEach((rule, index) => {
    try {
      new PermissionPolicy({ [kind]: [rule] });
    } catch (error) {
      if (!AgentError.isInstance(error)) throw error;
      throw new CliError(`${path}: permissions.${kind}[${index}]: ${error.message}`);
    }
  });
  return rules;
}

/**
 * An unknown top-level key: the one meant when a letter or two away (`modle`), or the place a
 * permission key belongs (`defaultMode`, `allow` at the top, as some guides write them).
 */
function unknownSettingMessage(key: string): string {
  const known = [...settingsKeys].filter((name) => name !== '$schema');
  const nested = permissionKeys.has(key)
    ? ` — it belongs under "permissions": { "${key}": … }`
    : '';
  return `unknown setting "${key}"${nested === '' ? didYouMean(key, known) : nested} (known: ${known.join(', ')})`;
}

function didYouMean(key: string, known: readonly string[]): string {
  const meant = closestWord(key, known);
  return meant === undefined ? '' : ` — did you mean "${meant}"?`;
}

/** Checks one settings file: unknown keys and wrong types are errors naming the file and key. */
export function checkSettings(value: unknown, path: string): SettingsFile {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new CliError(`${path} must hold a JSON object`);
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record))
    if (!settingsKeys.has(key)) throw new CliError(`${path}: ${unknownSettingMessage(key)}`);
  const permissions = record.permissions;
  if (permissions !== undefined) {
    if (permissions === null || typeof permissions !== 'object' || Array.isArray(permissions))
      throw new CliError(`${path}: "permissions" must be an object`);
    for (const key of Object.keys(permissions))
      if (!permissionKeys.has(key))
        throw new CliError(
          `${path}: unknown permission setting "${key}"${didYouMean(key, [...permissionKeys])} (known: ${[...permissionKeys].join(', ')})`,
        );
  }
  const p = (permissions ?? {}) as Record<string, unknown>;
  const env = record.env;
  if (
    env !== undefined &&
    (env === null ||
      typeof env !== 'object' ||
      Object.values(env).some((v) => typeof v !== 'string'))
  )
    throw new CliError(`${path}: "env" must map names to strings`);
  const checked: SettingsFile = {
    permissions: {
      allow: permissionRules(p.allow, 'allow', path),
      ask: permissionRules(p.ask, 'ask', path),
      deny: permissionRules(p.deny, 'deny', path),
    },
  };
  // Claude Code's and Codex's names are the usual thing to paste here: say which mode is theirs.
  const peer = typeof p.defaultMode === 'string' ? peerMode(p.defaultMode) : undefined;
  if (peer !== undefined && !modes.includes(p.defaultMode as string))
    throw new CliError(
      `${path}: permissions.defaultMode ${JSON.stringify(p.defaultMode)} is another agent's name: here it is "${peer}" (one of ${modes.join(', ')})`,
    );
  const mode = oneOf<PermissionMode>(p.defaultMode, modes, `${path}: permissions.defaultMode`);
  if (mode !== undefined && checked.permissions) checked.permissions.defaultMode = mode;
  if (p.keepGrants !== undefined) {
    if (typeof p.keepGrants !== 'boolean')
      throw new CliError(`${path}: permissions.keepGrants must be true or false`);
    if (checked.permissions) checked.permissions.keepGrants = p.keepGrants;
  }
  if (record.model !== undefined) {
    if (typeof record.model !== 'string') throw new CliError(`${path}: "model" must be a string`);
    checked.model = record.model;
  }
  const provider = oneOf<ProviderName>(record.provider, providers, `${path}: "provider"`);
  if (provider !== undefined) checked.provider = provider;
  const sandbox = oneOf<SandboxMode>(record.sandbox, sandboxModes, `${path}: "sandbox"`);
  if (sandbox !== undefined) checked.sandbox = sandbox;
  if (record.mcpServers !== undefined)
    checked.mcpServers = record.mcpServers as Record<string, unknown>;
  if (env !== undefined) checked.env = env as Record<string, string>;
  if (record.passEnv !== undefined)
    checked.passEnv = stringList(record.passEnv, `${path}: "passEnv"`);
  if (record.webFetchPrivateHosts !== undefined)
    checked.webFetchPrivateHosts = stringList(
      record.webFetchPrivateHosts,
      `${path}: "webFetchPrivateHosts"`,
    );
  if (record.mcpTimeout !== undefined) {
    if (typeof record.mcpTimeout !== 'number' || !(record.mcpTimeout > 0))
      throw new CliError(`${path}: "mcpTimeout" must be a number of seconds > 0`);
    checked.mcpTimeout = record.mcpTimeout;
  }
  if (record.mcpServe !== undefined) checked.mcpServe = checkServeLimits(record.mcpServe, path);
  if (record.sessions !== undefined) checked.sessions = checkRetention(record.sessions, path);
  if (record.compaction !== undefined)
    checked.compaction = checkCompaction(record.compaction, path);
  if (record.codeMode !== undefined) checked.codeMode = checkCodeModeSetting(record.codeMode, path);
  if (record.tools !== undefined) {
    const items =
      typeof record.tools === 'string'
        ? record.tools.split(',').map((item) => item.trim())
        : stringList(record.tools, `${path}: "tools"`);
    try {
      checkToolItems(items, `${path}: "tools"`);
    } catch (error) {
      if (error instanceof ToolListError) throw new CliError(error.message);
      throw error;
    }
    checked.tools = items;
  }
  const hooksSandbox = oneOf<HooksSandboxSetting>(
    record.hooksSandbox,
    hooksSandboxSettings,
    `${path}: "hooksSandbox"`,
  );
  if (hooksSandbox !== undefined) checked.hooksSandbox = hooksSandbox;
  const hooksNetwork = oneOf<'on' | 'off'>(
    record.hooksSandboxNetwork,
    ['on', 'off'],
    `${path}: "hooksSandboxNetwork"`,
  );
  if (hooksNetwork !== undefined) checked.hooksSandboxNetwork = hooksNetwork;
  if (record.sandboxProtect !== undefined)
    checked.sandboxProtect = checkSandboxProtect(record.sandboxProtect, path);
  if (record.hooks !== undefined) {
    try {
      checked.hooks = parseHooksConfig(record.hooks, `${path}: hooks`);
    } catch (error) {
      if (error instanceof HooksConfigError) throw new CliError(error.message);
      throw error;
    }
  }
  return checked;
}

function checkSandboxProtect(value: unknown, path: string): SandboxProtectSettings {
  const expected = `${path}: "sandboxProtect" must be an object like { "git": false, "startupFiles": true, "autoRunFiles": true }`;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new CliError(expected);
  const checked: SandboxProtectSettings = {};
  for (const [key, entry] of Object.entries(value)) {
    if (key !== 'git' && key !== 'startupFiles' && key !== 'autoRunFiles')
      throw new CliError(
        `${path}: "sandboxProtect.${key}" is unknown (expected "git", "startupFiles", "autoRunFiles")`,
      );
    if (typeof entry !== 'boolean')
      throw new CliError(`${path}: "sandboxProtect.${key}" must be true or false`);
    checked[key] = entry;
  }
  return checked;
}

function checkCompaction(value: unknown, path: string): CompactionSettings {
  if (value === false) return false;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new CliError(
      `${path}: "compaction" must be false or an object such as { "contextWindow": 32768 }`,
    );
  const checked: Exclude<CompactionSettings, false> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const fail = (why: string): never => {
      throw new CliError(`${path}: compaction.${key} ${why}`);
    };
    if (typeof item !== 'number' || !Number.isFinite(item)) fail('must be a number');
    const number = item as number;
    if (key === 'contextWindow') {
      if (!(number > 0)) fail('must be a number of tokens > 0');
      checked.contextWindow = number;
    } else if (key === 'threshold') {
      if (!(number > 0 && number <= 1)) fail('must be a fraction of the window in (0, 1]');
      checked.threshold = number;
    } else if (key === 'keepRecentTokens') {
      if (!(number >= 0)) fail('must be a number of tokens >= 0');
      checked.keepRecentTokens = number;
    } else
      throw new CliError(
        `${path}: unknown compaction setting "${key}" (known: contextWindow, threshold, keepRecentTokens)`,
      );
  }
  return checked;
}

function checkServeLimits(value: unknown, path: string): ServeLimits {
  const example = '{ "maxConcurrentCalls": 16, "maxQueuedCalls": 64 }';
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new CliError(`${path}: "mcpServe" must be an object such as ${example}`);
  const limits: ServeLimits = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const known = serveLimitFlags[key as keyof ServeLimits];
    if (known === undefined)
      throw new CliError(
        `${path}: unknown mcpServe setting "${key}" (known: ${Object.keys(serveLimitFlags).join(', ')})`,
      );
    if (typeof item !== 'number' || !Number.isInteger(item) || item < known.least)
      throw new CliError(`${path}: mcpServe.${key} must be a whole number >= ${known.least}`);
    limits[key as keyof ServeLimits] = item;
  }
  return limits;
}

function checkRetention(value: unknown, path: string): SessionRetention {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new CliError(`${path}: "sessions" must be an object such as { "keepDays": 30 }`);
  const record = value as Record<string, unknown>;
  const retention: SessionRetention = {};
  for (const [key, item] of Object.entries(record)) {
    if (!sessionKeys.has(key))
      throw new CliError(
        `${path}: unknown sessions setting "${key}" (known: ${[...sessionKeys].join(', ')})`,
      );
    if (typeof item !== 'number' || !Number.isInteger(item) || item < 1)
      throw new CliError(`${path}: sessions.${key} must be a whole number >= 1`);
    retention[key as keyof SessionRetention] = item;
  }
  return retention;
}
