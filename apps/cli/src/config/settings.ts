/**
 * Settings files in the usual layout, merged in this order with the flags on top:
 * `$AGENT_HOME/settings.json` (user; `~/.agent`), `.agent/settings.json` (project, committed),
 * `.agent/settings.local.json` (project, not committed), plus the project's `.mcp.json`
 * (`mcpServers`, the format other tools use). AGENTS.md files (user and project) go into the
 * system prompt.
 */
import { join, relative, resolve } from 'node:path';
import {
  type HooksConfig,
  HooksConfigError,
  mergeHooksConfigs,
  parseHooksConfig,
} from '@agent/command-hooks';
import { AgentError, errorMessage, type PermissionMode, PermissionPolicy } from '@agent/core';
import type { SandboxMode } from '@agent/sandbox';
import { realFolder } from '@agent/workspace-trust';
import { agentHome } from './agent-home.js';
import type {
  CliOptions,
  HooksSandboxSetting,
  ProviderName,
  SandboxProtectSettings,
} from './args.js';
import { CliError } from './cli-error.js';
import { type CodeModeSetting, checkCodeModeSetting } from './code-mode.js';
import { type McpServerEntry, parseMcpServers } from './mcp-servers.js';
import { jsonProblem, readProjectFile, readSettingsText } from './project-file.js';
import { foldersDownTo } from './project-root.js';
import { peerMode } from './suggest.js';
import { checkToolItems, onlyRemoves, type ToolList, ToolListError } from './tool-choice.js';

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
   * lets commands commit, `startupFiles: false` lets them edit the home's startup files [both true].
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

/** The settings of a session, merged, with where they came from. */
export interface Settings {
  allow: string[];
  ask: string[];
  deny: string[];
  mode: PermissionMode | undefined;
  keepGrants: boolean | undefined;
  model: string | undefined;
  provider: ProviderName | undefined;
  sandbox: SandboxMode | undefined;
  mcpServers: McpServerEntry[];
  env: Record<string, string>;
  /** Command hooks, the files' lists for each event one after the other. */
  hooks: HooksConfig;
  /** `hooksSandbox` of the user settings. */
  hooksSandbox: HooksSandboxSetting | undefined;
  /** `hooksSandboxNetwork` of the user settings. */
  hooksSandboxNetwork: 'on' | 'off' | undefined;
  /** `sandboxProtect` of the user settings. */
  sandboxProtect: SandboxProtectSettings;
  /** `passEnv` of the user settings. */
  passEnv: string[];
  /** `webFetchPrivateHosts` of the user settings, lower-cased. */
  webFetchPrivateHosts: string[];
  mcpTimeout: number | undefined;
  /** `sessions` of the user settings. */
  sessions: SessionRetention;
  /** `compaction` of the user settings. */
  compaction: CompactionSettings | undefined;
  /** `codeMode` of the user settings. */
  codeMode: CodeModeSetting | undefined;
  /** `tools` of each file that has it, in order (`--tools` applies after them). */
  tools: ToolList[];
  /** The files read, in order. */
  files: string[];
}

const modes = ['default', 'read-only', 'workspace-write', 'full-access', 'plan'];
const providers = ['anthropic', 'openai', 'google'];
const sandboxModes = ['auto', 'required', 'off'];
const hooksSandboxSettings = ['untrusted-folders', 'always', 'off'];
const topLevel = new Set([
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
  'sessions',
  'compaction',
  'codeMode',
  'tools',
  '$schema',
]);
const sessionKeys = new Set(['keepDays', 'keepPerWorkspace']);
const permissionKeys = new Set(['allow', 'ask', 'deny', 'defaultMode', 'keepGrants']);

async function readJson(path: string): Promise<unknown | undefined> {
  let text: string | undefined;
  try {
    text = await readSettingsText(path);
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error));
  }
  if (text === undefined) return undefined;
  // Some editors (Notepad among them) start a UTF-8 file with a byte-order mark; JSON.parse does not take it.
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`${path}: ${jsonProblem(error, text)}`);
  }
}

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

/** Checks one settings file: unknown keys and wrong types are errors naming the file and key. */
export function checkSettings(value: unknown, path: string): SettingsFile {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new CliError(`${path} must hold a JSON object`);
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record))
    if (!topLevel.has(key))
      throw new CliError(
        `${path}: unknown setting "${key}" (known: ${[...topLevel].filter((k) => k !== '$schema').join(', ')})`,
      );
  const permissions = record.permissions;
  if (permissions !== undefined) {
    if (permissions === null || typeof permissions !== 'object' || Array.isArray(permissions))
      throw new CliError(`${path}: "permissions" must be an object`);
    for (const key of Object.keys(permissions))
      if (!permissionKeys.has(key))
        throw new CliError(
          `${path}: unknown permission setting "${key}" (known: ${[...permissionKeys].join(', ')})`,
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
  const expected = `${path}: "sandboxProtect" must be an object like { "git": false, "startupFiles": true }`;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new CliError(expected);
  const checked: SandboxProtectSettings = {};
  for (const [key, entry] of Object.entries(value)) {
    if (key !== 'git' && key !== 'startupFiles')
      throw new CliError(
        `${path}: "sandboxProtect.${key}" is unknown (expected "git", "startupFiles")`,
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

/** Where a settings file sits: the user's own, or the project's (trusted or not). */
export type SettingsScope = 'user' | 'project';

/** One settings file (or `.mcp.json`), checked, with where it came from. */
export interface SettingsLayer {
  path: string;
  scope: SettingsScope;
  file: SettingsFile;
  /** Its MCP servers, parsed. */
  servers: McpServerEntry[];
}

/**
 * Reads the settings files in merge order (user, project, project local, the project's
 * `.mcp.json`). A project file that is the user's own file (the project is `$HOME`) counts once,
 * as the user's.
 */
export async function readSettingsLayers(
  cwd: string,
  home = agentHome(),
): Promise<SettingsLayer[]> {
  const project = resolve(cwd);
  const layers: SettingsLayer[] = [];
  const seen = new Set<string>();
  // The project's stdio servers start in the project root, wherever the session was started.
  const inProject = (servers: McpServerEntry[]) =>
    servers.map((server) => ({ ...server, baseDir: project }));
  const read = async (path: string, scope: SettingsScope, mcpJson = false) => {
    const real = realFolder(path);
    if (seen.has(real)) return;
    const raw = await readJson(path);
    if (raw === undefined) return;
    seen.add(real);
    if (mcpJson) {
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
        throw new CliError(`${path} must hold a JSON object with "mcpServers"`);
      const servers = (raw as { mcpServers?: unknown }).mcpServers;
      layers.push({ path, scope, file: {}, servers: inProject(parseMcpServers(servers, path)) });
      return;
    }
    const file = checkSettings(raw, path);
    // Passing a credential to the tools is the user's decision, never a workspace's.
    if (file.passEnv !== undefined && scope !== 'user')
      throw new CliError(
        `${path}: "passEnv" is read only from the user settings (${join(home, 'settings.json')}): a workspace cannot hand your credentials to its tools`,
      );
    // Opening your local network to pages the model fetches is your decision, never a
    // repository's: a cloned project could name its attacker's target on your intranet.
    if (file.webFetchPrivateHosts !== undefined && scope !== 'user')
      throw new CliError(
        `${path}: "webFetchPrivateHosts" is read only from the user settings (${join(home, 'settings.json')}): a workspace cannot open your local network to web_fetch`,
      );
    // What a session pays for summaries is yours to tune, not a repository's.
    if (file.compaction !== undefined && scope !== 'user')
      throw new CliError(
        `${path}: "compaction" is read only from the user settings (${join(home, 'settings.json')})`,
      );
    // How the model works with your tools is your choice, not a repository's.
    if (file.codeMode !== undefined && scope !== 'user')
      throw new CliError(
        `${path}: "codeMode" is read only from the user settings (${join(home, 'settings.json')})`,
      );
    // A workspace must not weaken the sandbox its own commands run in.
    if (file.sandboxProtect !== undefined && scope !== 'user')
      throw new CliError(
        `${path}: "sandboxProtect" is read only from the user settings (${join(home, 'settings.json')}): a workspace cannot weaken the sandbox its commands run in`,
      );
    // Where your hooks run contained is yours to decide: a workspace cannot take a hook out.
    for (const key of ['hooksSandbox', 'hooksSandboxNetwork'] as const)
      if (file[key] !== undefined && scope !== 'user')
        throw new CliError(
          `${path}: "${key}" is read only from the user settings (${join(home, 'settings.json')})`,
        );
    const unsandboxed = hooksOutsideSandbox(file.hooks);
    if (unsandboxed !== undefined && scope !== 'user')
      throw new CliError(
        `${path}: hooks.${unsandboxed}.sandbox is read only from the user settings (${join(home, 'settings.json')}): a workspace cannot take a hook out of the sandbox`,
      );
    // Your session history is yours: a repository does not decide when it is deleted.
    if (file.sessions !== undefined && scope !== 'user')
      throw new CliError(
        `${path}: "sessions" is read only from the user settings (${join(home, 'settings.json')}): a workspace does not decide how long your sessions are kept`,
      );
    // A workspace may take tools away, never hand the model more (use_aws, report_issue…).
    if (file.tools !== undefined && scope !== 'user' && !onlyRemoves(file.tools))
      throw new CliError(
        `${path}: "tools" in a project file may only remove tools ("-name", e.g. ["-bash"]); adding them is yours to choose: --tools, or "tools" in ${join(home, 'settings.json')}`,
      );
    const servers = file.mcpServers === undefined ? [] : parseMcpServers(file.mcpServers, path);
    layers.push({ path, scope, file, servers: scope === 'project' ? inProject(servers) : servers });
  };
  await read(join(home, 'settings.json'), 'user');
  await read(join(project, '.agent', 'settings.json'), 'project');
  await read(join(project, '.agent', 'settings.local.json'), 'project');
  await read(join(project, '.mcp.json'), 'project', true);
  return layers;
}

/** Where a file's hooks say `sandbox` (`PostToolUse[0].hooks[1]`), the first such; else undefined. */
function hooksOutsideSandbox(hooks: HooksConfig | undefined): string | undefined {
  for (const [event, entries] of Object.entries(hooks ?? {}))
    for (const [i, entry] of (entries ?? []).entries())
      for (const [j, hook] of entry.hooks.entries())
        if (hook.sandbox !== undefined) return `${event}[${i}].hooks[${j}]`;
  return undefined;
}

/** The settings of the layers merged as they are, every layer applied (later files win; rule lists add up). */
export function mergeSettings(layers: readonly SettingsLayer[]): Settings {
  const settings = emptySettings();
  const servers = new Map<string, McpServerEntry>();
  for (const { path, file, servers: layerServers } of layers) {
    settings.files.push(path);
    settings.allow.push(...(file.permissions?.allow ?? []));
    settings.ask.push(...(file.permissions?.ask ?? []));
    settings.deny.push(...(file.permissions?.deny ?? []));
    settings.mode = file.permissions?.defaultMode ?? settings.mode;
    settings.keepGrants = file.permissions?.keepGrants ?? settings.keepGrants;
    settings.model = file.model ?? settings.model;
    settings.provider = file.provider ?? settings.provider;
    settings.sandbox = file.sandbox ?? settings.sandbox;
    Object.assign(settings.env, file.env ?? {});
    if (file.hooks !== undefined) settings.hooks = mergeHooksConfigs(settings.hooks, file.hooks);
    settings.hooksSandbox = file.hooksSandbox ?? settings.hooksSandbox;
    settings.hooksSandboxNetwork = file.hooksSandboxNetwork ?? settings.hooksSandboxNetwork;
    Object.assign(settings.sandboxProtect, file.sandboxProtect ?? {});
    settings.passEnv.push(...(file.passEnv ?? []));
    settings.webFetchPrivateHosts.push(
      ...(file.webFetchPrivateHosts ?? []).map((host) => host.toLowerCase()),
    );
    settings.mcpTimeout = file.mcpTimeout ?? settings.mcpTimeout;
    Object.assign(settings.sessions, file.sessions ?? {});
    settings.compaction = file.compaction ?? settings.compaction;
    settings.codeMode = file.codeMode ?? settings.codeMode;
    if (file.tools !== undefined)
      settings.tools.push({ items: file.tools, source: `${path}: "tools"` });
    for (const entry of layerServers) servers.set(entry.name, entry);
  }
  settings.mcpServers = [...servers.values()];
  return settings;
}

/** Settings with nothing set. */
export function emptySettings(): Settings {
  return {
    allow: [],
    ask: [],
    deny: [],
    mode: undefined,
    keepGrants: undefined,
    model: undefined,
    provider: undefined,
    sandbox: undefined,
    mcpServers: [],
    env: {},
    hooks: {},
    hooksSandbox: undefined,
    hooksSandboxNetwork: undefined,
    sandboxProtect: {},
    passEnv: [],
    webFetchPrivateHosts: [],
    mcpTimeout: undefined,
    sessions: {},
    compaction: undefined,
    codeMode: undefined,
    tools: [],
    files: [],
  };
}

/** Reads and merges every settings file of a workspace, trusting them all (see `project-trust.ts`). */
export async function loadSettings(cwd: string, home = agentHome()): Promise<Settings> {
  return mergeSettings(await readSettingsLayers(cwd, home));
}

/** The options with the settings under them: a flag always wins; rule lists add up. */
export function applySettings(
  options: CliOptions,
  settings: Settings,
  sandboxFlagGiven: boolean,
): CliOptions {
  return {
    ...options,
    mode: options.mode ?? settings.mode,
    ...(options.keepGrants === true || settings.keepGrants === true ? { keepGrants: true } : {}),
    allow: [...settings.allow, ...options.allow],
    ask: [...settings.ask, ...options.ask],
    deny: [...settings.deny, ...options.deny],
    model: options.model ?? settings.model,
    provider: options.provider ?? settings.provider,
    sandbox: sandboxFlagGiven ? options.sandbox : (settings.sandbox ?? options.sandbox),
    mcpServers: settings.mcpServers,
    hooks: settings.hooks,
    ...(settings.hooksSandbox === undefined ? {} : { hooksSandbox: settings.hooksSandbox }),
    ...(settings.hooksSandboxNetwork === undefined
      ? {}
      : { hooksSandboxNetwork: settings.hooksSandboxNetwork }),
    ...(Object.keys(settings.sandboxProtect).length === 0
      ? {}
      : { sandboxProtect: { ...settings.sandboxProtect } }),
    passEnv: [...settings.passEnv, ...(options.passEnv ?? [])],
    ...(settings.webFetchPrivateHosts.length === 0
      ? {}
      : { webFetchPrivateHosts: [...settings.webFetchPrivateHosts] }),
    ...(options.mcpTimeoutSeconds !== undefined || settings.mcpTimeout === undefined
      ? {}
      : { mcpTimeoutSeconds: settings.mcpTimeout }),
    ...(settings.compaction === undefined ? {} : { compaction: settings.compaction }),
    ...codeModeOption(options.codeMode, settings.codeMode),
    ...(settings.tools.length === 0 && options.tools === undefined
      ? {}
      : { tools: [...settings.tools, ...(options.tools ?? [])] }),
  };
}

/** `--code-mode` turns code mode on (with the settings' tool list, if any); else the settings decide. */
function codeModeOption(
  flag: CodeModeSetting | undefined,
  setting: CodeModeSetting | undefined,
): { codeMode?: CodeModeSetting } {
  if (flag === true) return { codeMode: typeof setting === 'object' ? setting : true };
  const chosen = flag ?? setting;
  return chosen === undefined ? {} : { codeMode: chosen };
}

/**
 * AGENTS.md of the user, then of the project: the project root's and each folder's below it down
 * to the workspace (`cwd`), outermost first, as one system-prompt section ('' when none). A
 * project's AGENTS.md is read only when it is a regular file inside the project (a link to
 * `~/.ssh/id_rsa` would send the key to the model); one that is not is left out and `log` told.
 */
export async function agentsInstructions(
  folders: { cwd: string; root?: string | undefined },
  home = agentHome(),
  log: (line: string) => void = () => undefined,
): Promise<string> {
  const root = folders.root ?? realFolder(resolve(folders.cwd));
  const sections: string[] = [];
  const add = (path: string, label: string, text: string) => {
    if (text.trim() !== '') sections.push(`Instructions from ${path} (${label}):\n${text.trim()}`);
  };
  const userFile = join(home, 'AGENTS.md');
  try {
    add(userFile, 'user', (await readSettingsText(userFile)) ?? '');
  } catch (error) {
    // Not a regular file, or too big to be instructions: said, and left out.
    log(`agent: ${errorMessage(error)}; it is not used`);
  }
  for (const folder of foldersDownTo(root, folders.cwd)) {
    const path = join(folder, 'AGENTS.md');
    const found = await readProjectFile(path, root);
    if (found.kind === 'read')
      add(path, folder === root ? 'project' : `project, ${relative(root, folder)}`, found.text);
    else if (found.kind === 'refused') log(`agent: ${path} is not used: ${found.reason}`);
  }
  return sections.join('\n\n');
}
