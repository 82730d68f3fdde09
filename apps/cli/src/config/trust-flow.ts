/**
 * Workspace trust at start-up: what of the project's configuration applies, decided before any
 * of it runs. An untrusted folder may only narrow; a trusted one applies what was pinned when it
 * was trusted; anything new or changed waits for the user (the REPL asks; `-p` and `mcp serve`
 * leave it out with a notice). Provider keys never follow a base URL the project chose.
 */
import { join, relative } from 'node:path';
import { type PermissionMode, terminalSafe } from '@agent/core';
import type { SandboxMode } from '@agent/sandbox';
import {
  decideTrust,
  describeWithheld,
  isWholesaleFolder,
  realFolder,
  type TrustDecision,
  TrustStore,
} from '@agent/workspace-trust';
import { agentHome } from './agent-home.js';
import type { CliOptions } from './args.js';
import { guardsNotInForceAsks, type RemovedGuard, removedGuards } from './guards-not-in-force.js';
import { findProjectRoot, type ProjectRootKind } from './project-root.js';
import {
  projectTrustItems,
  type TrustBaseline,
  trustedSettings,
  trustItemKey,
} from './project-trust.js';
import { readSettingsLayers, type Settings, type SettingsLayer } from './settings.js';

/** Where the trusted folders are kept. */
export function trustStorePath(home = agentHome()): string {
  return join(home, 'trusted-folders.json');
}

/** What the front end can do about a folder that is not (fully) trusted. */
export interface TrustFrontEnd {
  /** The mode a session gets with no flag and no settings (`read-only` for -p, `default` for the REPL). */
  defaultMode: PermissionMode;
  /** Asks the user (the REPL); resolves true to trust. Absent: never ask (-p, mcp serve). */
  ask?: (question: TrustQuestion) => Promise<boolean>;
}

/** What the user is asked about. */
export interface TrustQuestion {
  folder: string;
  /** One line per item that would run or widen, new and changed ones marked. */
  lines: string[];
  /** Whether the folder was trusted before (and something changed since). */
  changed: boolean;
  /** The home directory or `/`: trusting it does not trust the folders below it. */
  wholesale: boolean;
}

/** The settings that apply, and what to tell the user once on stderr. */
export interface TrustedStart {
  settings: Settings;
  notices: string[];
  decision: TrustDecision;
  /** The folder judged (real path): the project root, whose configuration was read. */
  folder: string;
  /** How the project root was found (a git root, a folder with `.agent/`, or the workspace itself). */
  rootKind: ProjectRootKind;
  /**
   * Whether the user trusts the folder (an entry covers it, or `--trust`), whatever it configures:
   * without it, code the repository ships (its language servers) runs only in the sandbox.
   */
  trusted: boolean;
}

/** The mode and sandbox the session would have without the project's files. */
function baselineOf(
  layers: readonly SettingsLayer[],
  options: Pick<CliOptions, 'mode' | 'sandbox' | 'sandboxExplicit'>,
  defaultMode: PermissionMode,
): TrustBaseline {
  let userMode: PermissionMode | undefined;
  let userSandbox: SandboxMode | undefined;
  for (const layer of layers) {
    if (layer.scope !== 'user') continue;
    userMode = layer.file.permissions?.defaultMode ?? userMode;
    userSandbox = layer.file.sandbox ?? userSandbox;
  }
  const sandboxFromFlag = options.sandboxExplicit === true;
  return {
    mode: options.mode ?? userMode ?? defaultMode,
    modeFromFlag: options.mode !== undefined,
    sandbox: sandboxFromFlag ? options.sandbox : (userSandbox ?? 'auto'),
    sandboxFromFlag,
  };
}

/**
 * Reads the settings files of the project `options.cwd` belongs to (its git root, or the nearest
 * folder with `.agent/`: see `project-root.ts`), decides trust for that folder (asking through
 * `front.ask` when it can) and returns the settings that apply. Nothing of the project has run
 * when this returns.
 */
export async function startWithTrust(
  options: Pick<CliOptions, 'cwd' | 'mode' | 'sandbox' | 'sandboxExplicit'> & { trust?: boolean },
  front: TrustFrontEnd,
  home = agentHome(),
): Promise<TrustedStart> {
  // By real path: a symlinked workspace is the folder it points to. Started from a subfolder of a
  // repository, the repository is what is judged (its hooks would run all the same).
  const project = findProjectRoot(options.cwd, { agentHome: home });
  const folder = realFolder(project.root);
  const layers = await readSettingsLayers(folder, home);
  const baseline = baselineOf(layers, options, front.defaultMode);
  const items = projectTrustItems(layers, baseline, folder);
  const notices: string[] = (project.ignored ?? []).map((line) => `agent: ${line}`);
  // Keys only the user's settings may set, left out of the project's files: said whether or not
  // the folder is trusted (trust never lets a project set them).
  for (const layer of layers) notices.push(...(layer.ignored ?? []));
  let decision: TrustDecision;
  let removed: RemovedGuard[] = [];
  {
    const store = await TrustStore.open(trustStorePath(home));
    notices.push(...store.warnings.map((warning) => `agent: trust store: ${warning}`));
    // A repository of its own (a clone, a submodule, a worktree) is covered by its own entry only,
    // never by a trusted folder above it; an entry whose folder was removed and made again at its
    // path (a new clone there) covers nothing.
    const cover = { ownRepository: project.kind === 'git' };
    const entry = store.entryFor(folder, cover);
    const uncovered = options.trust === true ? undefined : store.uncoveredBecause(folder, cover);
    if (uncovered !== undefined)
      notices.push(`agent: ${terminalSafe(uncovered, { singleLine: true })}`);
    decision = decideTrust({ items, entry, trustedByFlag: options.trust === true });
    // A guard the user trusted that is gone from the file is a change to ask about too.
    removed = removedGuards(decision);
    if ((decision.withheld.length > 0 || removed.length > 0) && front.ask !== undefined) {
      const yes = await front.ask({
        folder,
        lines: [...describeWithheld(decision.withheld), ...removedLines(removed)],
        changed: decision.state === 'changed' || removed.length > 0,
        wholesale: isWholesaleFolder(folder),
      });
      if (yes) {
        await store.trust(folder, items);
        decision = {
          ...decision,
          state: 'trusted',
          accepted: [...items],
          withheld: [],
          removed: [],
        };
        removed = [];
      }
    }
    if (decision.withheld.length > 0) notices.push(...withheldNotice(folder, decision));
  }
  const accepted = new Set(decision.accepted.map((item) => item.key));
  const settings = trustedSettings(layers, baseline, folder, accepted);
  notices.push(...guardProviderEndpoints(settings, layers, accepted, folder));
  const trusted = decision.state !== 'untrusted';
  // PreToolUse guards (or whole files) that could not be used: their tools ask first where the
  // project's hooks run. In an untrusted folder no project hook runs, so nothing is lost there.
  if (trusted)
    for (const layer of layers)
      if (layer.scope === 'project') settings.ask.push(...(layer.guardAsks ?? []));
  // Guards trusted there that are not in force (changed, new, removed): their tools ask first too.
  const guardAsks = guardsNotInForceAsks(decision, removed);
  if (guardAsks.length > 0) {
    settings.ask.push(...guardAsks);
    notices.push(...guardsNotice(folder, removed, guardAsks));
  }
  return { settings, notices, decision, folder, rootKind: project.kind, trusted };
}

/** Lines of withheld configuration a notice names before counting the rest. */
const maxWithheldLines = 20;

function withheldNotice(folderPath: string, decision: TrustDecision): string[] {
  // The folder's name is the repository's (or its URL's): a newline in it would start a line of
  // its own in the notice, looking like one more item, or like none.
  const folder = terminalSafe(folderPath, { singleLine: true });
  const all = describeWithheld(decision.withheld).map((line) => `  ${line}`);
  // A repository with thousands of hooks made this notice thousands of lines at every start (and
  // in every CI log); the first ones say what kind of folder it is, the trust question the rest.
  const lines =
    all.length <= maxWithheldLines
      ? all
      : [
          ...all.slice(0, maxWithheldLines),
          `  … and ${all.length - maxWithheldLines} more (an interactive \`agent\` in the folder shows them all before asking)`,
        ];
  const how =
    'Trust it for this run with --trust, or for good with `agent trust` (kept in $AGENT_HOME/trusted-folders.json; `agent trust revoke` undoes it).';
  if (decision.state === 'untrusted')
    return [
      `agent: ${folder} is not a trusted folder, so its configuration that runs commands or widens permissions is ignored (deny/ask rules and AGENTS.md still apply):`,
      ...lines,
      how,
    ];
  return [
    `agent: the configuration of ${folder} changed since it was trusted; until you trust it again this is ignored:`,
    ...lines,
    how,
  ];
}

/**
 * One line per removed guard: `removed hook PreToolUse (bash) runs: ./guard.sh (<file>) — gone
 * from the file, it no longer runs` (the REPL's question lists it under what trusting lets run).
 */
function removedLines(removed: readonly RemovedGuard[]): string[] {
  return removed.map(({ description, source }) =>
    terminalSafe(`removed ${description} (${source}) — gone from the file, it no longer runs`, {
      singleLine: true,
    }),
  );
}

function guardsNotice(
  folderPath: string,
  removed: readonly RemovedGuard[],
  asks: readonly string[],
): string[] {
  const folder = terminalSafe(folderPath, { singleLine: true });
  const who = asks.includes('*')
    ? 'every tool asks'
    : `${asks.join(', ')} ${asks.length === 1 ? 'asks' : 'ask'}`;
  return [
    ...(removed.length === 0
      ? []
      : [
          `agent: PreToolUse guards trusted in ${folder} are gone from its settings:`,
          ...removedLines(removed).map((line) => `  ${line}`),
        ]),
    `agent: so that no call runs unguarded while a PreToolUse guard trusted in ${folder} is not in force (changed, new or removed), ${who} first until you trust the folder again (\`agent trust\`).`,
  ];
}

/** Variables the CLI's own process reads, and what each decides (for the notice). */
const ownProcessVariables: Readonly<Record<string, string>> = {
  NODE_TLS_REJECT_UNAUTHORIZED:
    "whether the certificates of your provider's and servers' connections are checked",
  BROWSER: 'the program that opens web pages for you',
};

/** Provider prefixes of environment variables, and the variables that hold their credentials. */
const providerPrefixes = [
  'OPENAI',
  'AZURE_OPENAI',
  'ANTHROPIC',
  'GEMINI',
  'GOOGLE_GEMINI',
  'GOOGLE',
];

function providerOf(name: string): string | undefined {
  return providerPrefixes
    .filter((prefix) => name.startsWith(`${prefix}_`))
    .sort((a, b) => b.length - a.length)[0];
}

/** A variable that says where a provider's requests (and so its key) go. */
function isEndpointVariable(name: string): boolean {
  return providerOf(name) !== undefined && /(URL|BASE|ENDPOINT|HOST|PROXY)/.test(name);
}

function isCredentialVariable(name: string): boolean {
  return providerOf(name) !== undefined && /(KEY|TOKEN|SECRET)/.test(name);
}

/**
 * A provider key is sent only to the vendor's own host unless the endpoint came from the same
 * file as the key, or from the user (their environment, their settings, a flag). A project's
 * endpoint variable without a key of its own beside it is dropped from `settings.env` (so no
 * vendor SDK reads it); one that does come with its own key is used and said once.
 */
function guardProviderEndpoints(
  settings: Settings,
  layers: readonly SettingsLayer[],
  accepted: ReadonlySet<string>,
  folder: string,
): string[] {
  const notices: string[] = [];
  // Which layer each applied variable came from (the last one that set it, as merged).
  const origin = new Map<string, SettingsLayer>();
  for (const layer of layers)
    for (const name of Object.keys(layer.file.env ?? {})) {
      if (layer.scope === 'user' || accepted.has(trustItemKey(layer.path, `env.${name}`)))
        origin.set(name, layer);
    }
  for (const name of Object.keys(settings.env)) {
    const layer = origin.get(name);
    if (layer === undefined || layer.scope === 'user') continue;
    // Where the CLI keeps its own state (the trust store, MCP tool pins, tokens, sessions) is the
    // user's: a project that moved it could trust itself or unpin its servers' tools next time.
    // HOME too: the sandbox hides the credential stores under it (~/.ssh, ~/.aws…), and a home
    // moved to a folder of the project's choosing would leave the real ones readable.
    if (name === 'AGENT_HOME' || name === 'HOME') {
      delete settings.env[name];
      notices.push(
        `agent: ignored ${name} from ${relative(folder, layer.path)}: ${name === 'HOME' ? 'your home folder (where your credentials are kept, and hidden from commands)' : 'where the agent keeps its state'} is set by you, not by a project`,
      );
      continue;
    }
    // Read by this process itself, outside any sandbox: Node at every TLS connection ("0" turns
    // certificate checks off for the provider's requests, your key readable by any network in the
    // path), the CLI to open a URL (BROWSER is a program: a project's `./open.sh` ran unsandboxed
    // when you said yes to a server's sign-in page). Yours to decide, never a project's.
    const ownSetting = Object.hasOwn(ownProcessVariables, name)
      ? ownProcessVariables[name]
      : undefined;
    if (ownSetting !== undefined) {
      delete settings.env[name];
      notices.push(
        `agent: ignored ${name} from ${relative(folder, layer.path)}: ${ownSetting} is set by you, not by a project`,
      );
      continue;
    }
    if (!isEndpointVariable(name)) continue;
    const provider = providerOf(name);
    const ownKey = Object.keys(layer.file.env ?? {}).some(
      (other) => isCredentialVariable(other) && providerOf(other) === provider,
    );
    const where = relative(folder, layer.path);
    if (ownKey) {
      notices.push(
        `agent: ${name}=${settings.env[name]} comes from ${where} (with its own key from the same file)`,
      );
      continue;
    }
    delete settings.env[name];
    notices.push(
      `agent: ignored ${name} from ${where}: your ${provider} key is only sent to the vendor's own host unless the endpoint is set where the key is (your environment or settings, or --base-url)`,
    );
  }
  return notices;
}
