/**
 * Settings files in the usual layout, merged in this order with the flags on top:
 * `$AGENT_HOME/settings.json` (user; `~/.agent`), `.agent/settings.json` (project, committed),
 * `.agent/settings.local.json` (project, not committed), plus the project's `.mcp.json`
 * (`mcpServers`, the format other tools use). AGENTS.md files (user and project) go into the
 * system prompt.
 */
import { homedir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { type HooksConfig, mergeHooksConfigs } from '@agent/command-hooks';
import { errorMessage, type PermissionMode } from '@agent/core';
import type { SandboxMode } from '@agent/sandbox';
import { realFolder } from '@agent/workspace-trust';
import { agentHome } from './agent-home.js';
import type {
  CliOptions,
  HooksSandboxSetting,
  ProviderName,
  SandboxProtectSettings,
  ServeLimits,
} from './args.js';
import { CliError } from './cli-error.js';
import type { CodeModeSetting } from './code-mode.js';
import { type McpServerEntry, parseMcpServers } from './mcp-servers.js';
import { jsonProblem, readProjectFile, readSettingsText } from './project-file.js';
import { foldersDownTo } from './project-root.js';
import type { CompactionSettings, SessionRetention, SettingsFile } from './settings-file.js';
import { checkSettingsByKey, unreadableEffect, unreadableGuardAsks } from './settings-problems.js';
import type { ToolList } from './tool-choice.js';
import { withoutUserOnlyKeys } from './user-only-keys.js';

// Imported from here by the session's modules (they predate settings-file.ts).
export type { SessionRetention };

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
  /** `mcpServe` of the user settings. */
  mcpServe: ServeLimits;
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
    const problem =
      text.trim() === ''
        ? 'it is empty (a settings file holds one JSON object: write {} or remove the file)'
        : jsonProblem(error, text);
    throw new CliError(`${path}: ${problem}`);
  }
}

/**
 * How `~` and `${VAR}` in a file's `mcpServers` are expanded: variables only in the user's own
 * file (config/mcp-expand.ts says why).
 */
function expansionOf(scope: SettingsScope) {
  return scope === 'user' ? { home: homedir(), env: process.env } : { home: homedir() };
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
  /** Notice lines for keys of a project file left out (only the user's settings may set them). */
  ignored?: string[];
  /**
   * Tools that ask first in place of the file's PreToolUse guards (or the whole file) that could
   * not be used (`*`: every tool): applied only where the folder is trusted, as only there would
   * those guards have run (`startWithTrust`).
   */
  guardAsks?: string[];
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
    let raw: unknown;
    try {
      raw = await readJson(path);
    } catch (error) {
      // A project's file never stops the CLI: a repository could keep it from starting there.
      if (scope === 'user' || !(error instanceof CliError)) throw error;
      layers.push(
        mcpJson
          ? unusedLayer(path, `agent: ${error.message}; it is not used`)
          : {
              ...unusedLayer(path, `agent: ${error.message}; ${unreadableEffect}`),
              guardAsks: [...unreadableGuardAsks],
            },
      );
      return;
    }
    if (raw === undefined) return;
    seen.add(real);
    if (mcpJson) {
      const servers = isObject(raw) ? raw.mcpServers : undefined;
      if (servers === undefined) {
        layers.push(
          unusedLayer(path, `agent: ${path} holds no object "mcpServers"; it is not used`),
        );
        return;
      }
      const parsed = parseMcpServers(servers, path, expansionOf(scope));
      layers.push({
        path,
        scope,
        file: {},
        servers: inProject(parsed.entries),
        ...(parsed.notices.length === 0 ? {} : { ignored: parsed.notices }),
      });
      return;
    }
    const byKey = checkSettingsByKey(raw, path);
    // The user's own file: an unknown key (a newer version's) is said; a value that cannot be
    // used is an error, theirs to fix. A project's: every problem is said and left out.
    const unusable = byKey.problems.find((problem) => problem.kind === 'invalid');
    if (scope === 'user' && unusable !== undefined) throw new CliError(unusable.message);
    const problems = byKey.problems.map(
      (problem) => `agent: ${problem.message}; ${problem.effect}`,
    );
    // What only the user's own settings may set is left out of a project file, said once.
    const checked =
      scope === 'user'
        ? { file: byKey.file, ignored: [] }
        : withoutUserOnlyKeys(byKey.file, path, home);
    const file = checked.file;
    const parsed =
      file.mcpServers === undefined
        ? { entries: [], notices: [] }
        : parseMcpServers(file.mcpServers, path, expansionOf(scope));
    const servers = parsed.entries;
    const ignored = [...problems, ...checked.ignored, ...parsed.notices];
    layers.push({
      path,
      scope,
      file,
      servers: scope === 'project' ? inProject(servers) : servers,
      ...(ignored.length === 0 ? {} : { ignored }),
      ...(byKey.guardAsks.length === 0 ? {} : { guardAsks: byKey.guardAsks }),
    });
  };
  await read(join(home, 'settings.json'), 'user');
  await read(join(project, '.agent', 'settings.json'), 'project');
  await read(join(project, '.agent', 'settings.local.json'), 'project');
  await read(join(project, '.mcp.json'), 'project', true);
  return layers;
}

/** A project file that could not be used: nothing of it applies, and `notice` says why. */
function unusedLayer(path: string, notice: string): SettingsLayer {
  return { path, scope: 'project', file: {}, servers: [], ignored: [notice] };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The settings of the layers merged as they are, every layer applied (later files win; rule lists add up). */
export function mergeSettings(layers: readonly SettingsLayer[]): Settings {
  const settings = emptySettings();
  const servers = new Map<string, McpServerEntry>();
  for (const { path, file, servers: layerServers, guardAsks } of layers) {
    settings.files.push(path);
    settings.allow.push(...(file.permissions?.allow ?? []));
    // Every file trusted here: the asks standing in for guards that could not be used apply.
    settings.ask.push(...(file.permissions?.ask ?? []), ...(guardAsks ?? []));
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
    Object.assign(settings.mcpServe, file.mcpServe ?? {});
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
    mcpServe: {},
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
    denyFlags: options.deny,
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
    ...(Object.keys(settings.mcpServe).length === 0 && options.serveLimits === undefined
      ? {}
      : { serveLimits: { ...settings.mcpServe, ...options.serveLimits } }),
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
  // Each file is capped; their sum is too: a repository nesting the workspace a hundred folders
  // deep, a 1 MiB AGENTS.md in each, sent 100 MiB with every request.
  let projectBytes = 0;
  for (const folder of foldersDownTo(root, folders.cwd)) {
    const path = join(folder, 'AGENTS.md');
    const found = await readProjectFile(path, root);
    if (found.kind === 'read') {
      const bytes = Buffer.byteLength(found.text);
      if (projectBytes + bytes > maximumProjectInstructionBytes) {
        log(
          `agent: ${path} is not used: the project's AGENTS.md files would pass ${maximumProjectInstructionBytes} bytes in all`,
        );
        continue;
      }
      projectBytes += bytes;
      add(path, folder === root ? 'project' : `project, ${relative(root, folder)}`, found.text);
    } else if (found.kind === 'refused') log(`agent: ${path} is not used: ${found.reason}`);
  }
  return sections.join('\n\n');
}

/** The most a project's AGENTS.md files (root and folders down to the workspace) give in all (bytes). */
export const maximumProjectInstructionBytes = 2 * 1024 * 1024;
