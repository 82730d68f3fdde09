import { homedir } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import {
  type AnyAgentTool,
  createIntrospectTool,
  errorMessage,
  type PermissionPolicy,
  urlWithoutCredentials,
  withheldVariableNames,
} from '@agent/core';
import {
  createSandbox,
  defaultSecretPaths,
  type HiddenPatterns,
  type Sandbox,
  SandboxUnavailableError,
} from '@agent/sandbox';
import { BackgroundTasks, defaultTools, type ProtectedWrites } from '@agent/tools-builtin';
import type { McpToolAdapter } from '@agent/tools-mcp';
import type { OpenApiToolAdapter } from '@agent/tools-openapi';
import { agentHome } from '../config/agent-home.js';
import type { CliOptions } from '../config/args.js';
import { CliError } from '../config/cli-error.js';
import { argumentKeyNotice } from '../config/command-secrets.js';
import { credentialFilePaths } from '../config/credential-files.js';
import type { McpToolChangeQuestion } from '../config/mcp-pins.js';
import { type McpServerEntry, mcpServerSecrets, readMcpConfig } from '../config/mcp-servers.js';
import { sharedFileRedactions } from '../config/shared-file-secrets.js';
import { chooseTools, type ToolChoice } from '../config/tool-choice.js';
import type { McpInteractions } from '../ui/mcp-interactions.js';
import { redactAlso } from '../ui/redaction.js';
import { type LoadedLspTools, loadLspTools } from './lsp-tools.js';
import { connectMcpServers, reportUnmatched } from './mcp-tools.js';
import { placeUserServers } from './mcp-untrusted-folder.js';

/** Every tool of a session, and how to release what they hold (MCP servers, background commands). */
export interface ToolSet {
  tools: AnyAgentTool[];
  /** One line per source, for the banner. */
  sources: string[];
  /** The OS sandbox bash runs in (its `describe()` is the banner's sandbox line). */
  sandbox: Sandbox;
  /**
   * The variables of this process's environment that the tools' processes do not get (credentials
   * by core's rules, `passEnv` aside), by name, for the banner's {@link withheldNotice}.
   */
  withheld: string[];
  /** The connected MCP servers (for `/mcp` and their prompts as slash commands). */
  mcp: McpToolAdapter[];
  /** Which tools the session offers (`--tools` and the settings' lists). */
  choice: ToolChoice;
  close(): Promise<void>;
}

function isInside(root: string, entry: string): boolean {
  const rest = relative(root, entry);
  return rest === '' || (rest !== '..' && !rest.startsWith(`..${sep}`) && !isAbsolute(rest));
}

/**
 * `$AGENT_HOME` holds what a command has no business reading: the user's settings (their `env`
 * may hold tokens), MCP servers' OAuth tokens, every workspace's sessions, journals and
 * checkpoint copies, the trusted-folder list. Hidden from sandboxed commands like any credential
 * store; only the user's skills show through (their scripts are run by bash).
 */
function agentStateSandboxOptions(options: { cwd: string; passEnv: readonly string[] }): {
  secretPaths: string[];
  readableRoots: string[];
} {
  const home = agentHome();
  return {
    // And the files the credential variables name (a service account's key file, a token file),
    // except those of the variables the user passes to the tools.
    secretPaths: [
      ...defaultSecretPaths(),
      home,
      ...credentialFilePaths(process.env, { cwd: options.cwd, pass: options.passEnv }),
    ],
    readableRoots: [join(home, 'skills')],
  };
}

/** Builds the session's tools: built-ins in `cwd`, then each MCP server, then each OpenAPI document. */
export async function loadTools(
  options: Pick<
    CliOptions,
    | 'cwd'
    | 'mcpConfig'
    | 'openapi'
    | 'sandbox'
    | 'sandboxProtect'
    | 'passEnv'
    | 'webFetchPrivateHosts'
    | 'workspaceTrusted'
    | 'projectRoot'
    | 'mcpTimeoutSeconds'
    | 'tools'
  > & {
    /**
     * Paths bash's sandbox hides besides the credential stores, asked for at each command: the
     * paths the session's read rules deny or ask about (`PermissionPolicy.pathsToHide`).
     */
    hiddenPaths?: () => readonly string[];
    /** Paths bash's sandbox keeps read-only, asked for at each command: those the write rules deny or ask about. */
    readOnlyPaths?: () => readonly string[];
    /**
     * What bash's sandbox looks for and hides at each command: the read rules' patterns that name
     * no one path (`Read(*.pem)`, `Read(**\/.env)`), with the policy's own check.
     */
    hiddenPatterns?: () => HiddenPatterns | undefined;
    /** The same for the write rules' patterns: what they cover is kept read-only. */
    readOnlyPatterns?: () => HiddenPatterns | undefined;
    /** Servers from settings files and `.mcp.json`; `--mcp-config` wins by name. */
    mcpServers?: readonly McpServerEntry[];
    /** Answers servers' elicitation, sampling, roots and log messages (none: not declared). */
    mcpInteractions?: McpInteractions;
    /**
     * Asked when a server's tools changed since they were first used (the REPL); true lets the
     * changed tools through and records them. Absent: they are left out with a notice.
     */
    confirmMcpToolChanges?: McpToolChangeQuestion;
    /** Called with the built-in tools before the MCP servers start (the policy learns them). */
    beforeMcpServers?: (tools: readonly AnyAgentTool[]) => void;
  },
  log: (line: string) => void,
): Promise<ToolSet> {
  const backgroundTasks = new BackgroundTasks();
  const cwd = resolve(options.cwd);
  const agentState = agentStateSandboxOptions({ cwd, passEnv: options.passEnv ?? [] });
  let sandbox: Sandbox;
  try {
    sandbox = createSandbox({
      mode: options.sandbox,
      writableRoots: [cwd],
      // The user's settings may let commands commit, or edit the home's startup files.
      protectGitDirectories: options.sandboxProtect?.git !== false,
      protectStartupFiles: options.sandboxProtect?.startupFiles !== false,
      protectAutoRunFiles: options.sandboxProtect?.autoRunFiles !== false,
      // What the user's rules keep from reading (writing), commands do not read (write) either, by any name.
      ...(options.hiddenPaths === undefined ? {} : { hiddenPaths: options.hiddenPaths }),
      ...(options.readOnlyPaths === undefined ? {} : { readOnlyPaths: options.readOnlyPaths }),
      ...(options.hiddenPatterns === undefined ? {} : { hiddenPatterns: options.hiddenPatterns }),
      ...(options.readOnlyPatterns === undefined
        ? {}
        : { readOnlyPatterns: options.readOnlyPatterns }),
      // Commands read this session's spill files at the paths bash gives, and no other's; and
      // none of the CLI's own state (see agentStateSandboxOptions).
      ...backgroundTasks.spillDirectory.sandboxOptions(agentState),
      // The banner says it: no process warning on top.
      onWarning: () => undefined,
    });
  } catch (error) {
    if (SandboxUnavailableError.isInstance(error)) throw new CliError(error.message);
    throw error;
  }
  // Nor the credentials of git's configuration and the shell's startup files (the sandbox shows
  // them without).
  redactAlso(sharedFileRedactions(cwd));
  // Processes the tools start get no credential of this process's environment (the provider's
  // key included) unless --pass-env / settings' passEnv names it. MCP servers get a minimal
  // environment and their own config's `env` instead.
  const passEnv = options.passEnv ?? [];
  // Which tools: every source below makes only what the lists choose.
  const choice = chooseTools(options.tools ?? []);
  for (const notice of choice.notices()) log(notice);
  const protectedWrites: ProtectedWrites = {
    git: options.sandboxProtect?.git !== false,
    startupFiles: options.sandboxProtect?.startupFiles !== false,
    autoRunFiles: options.sandboxProtect?.autoRunFiles !== false,
  };
  const tools: AnyAgentTool[] = defaultTools({
    cwd,
    backgroundTasks,
    bash: { sandbox, passEnv },
    tools: choice.builtin,
    // What bash's sandbox hides, the file tools do not reach either (a workspace that is the home
    // directory holds ~/.ssh, ~/.aws and $AGENT_HOME with its MCP tokens).
    // One that holds the workspace stays whole: the user chose to work there (as the sandbox does).
    hiddenRoots: agentState.secretPaths.filter((path) => !isInside(path, cwd)),
    // What bash's sandbox keeps read-only, the file tools write only at the full-access tier.
    protectedWrites,
  });
  // web_fetch; web_search when a backend is configured (BRAVE_API_KEY, TAVILY_API_KEY, SEARXNG_URL).
  const web = await import('@agent/tools-web');
  // Private addresses stay refused except for the hosts the user's settings name.
  const privateHosts = new Set(options.webFetchPrivateHosts ?? []);
  if (choice.has('web_fetch'))
    tools.push(
      web.createWebFetchTool(
        privateHosts.size === 0
          ? {}
          : { allowPrivateAddress: (host) => privateHosts.has(host.toLowerCase()) },
      ),
    );
  const searchBackend = web.webSearchBackendFromEnv();
  if (searchBackend !== undefined && choice.has('web_search'))
    tools.push(web.createWebSearchTool({ backend: searchBackend }));
  const sources = [`built-in (${tools.length}) in ${cwd}`];
  const adapters: McpToolAdapter[] = [];
  let lsp: LoadedLspTools | undefined;
  let repl: { close(): Promise<void> } | undefined;
  const close = async () => {
    await Promise.allSettled([
      // Kills background commands and removes this session's spill files.
      backgroundTasks.close(),
      ...adapters.map((adapter) => adapter.close()),
      lsp?.close(),
      repl?.close(),
    ]);
    await sandbox.close();
  };
  try {
    // Persistent JavaScript (and Python, when python3 exists) sessions, in the session's sandbox.
    if (choice.has('js_repl') || choice.has('python_repl')) {
      const { createReplTools } = await import('@agent/tools-repl');
      const replTools = createReplTools({ cwd, sandbox, passEnv });
      repl = replTools;
      const chosen = replTools.tools.filter((tool) => choice.has(tool.name));
      tools.push(...chosen);
      sources.push(`repl (${chosen.length}): ${chosen.map((tool) => tool.name).join(', ')}`);
    }
    // Language servers may be the repository's own (node_modules/.bin, its TypeScript): those run
    // only in a folder the user trusts (in the sandbox); else only servers installed elsewhere
    // do, and only in the sandbox.
    if (sandbox.status.active || options.workspaceTrusted !== false)
      lsp = await loadLspTools(cwd, tools, {
        sandbox,
        protectedWrites,
        passEnv,
        trusted: options.workspaceTrusted !== false,
        log,
      });
    else sources.push('lsp off (an untrusted folder, and commands are not sandboxed)');
    if (lsp !== undefined) {
      tools.push(...lsp.tools);
      sources.push(lsp.source);
    }
    // Kiro's `code` (--tools kiro or code) maps its operations onto the LSP tools.
    if (choice.has('code') && lsp !== undefined) {
      const { createCodeTool } = await import('@agent/tools-lsp');
      tools.push(createCodeTool(lsp.tools));
      sources.push('code (1): over the lsp tools');
    } else if (choice.has('code')) sources.push('code off (no language server)');
    // Agent Skills in .agent/skills, .claude/skills (the project root, then the user): one `skill` tool.
    if (choice.has('skill')) {
      const { loadSkillTool } = await import('@agent/tools-skills');
      const projectRoot = options.projectRoot ?? cwd;
      const projectRoots = [
        join(projectRoot, '.agent', 'skills'),
        join(projectRoot, '.claude', 'skills'),
      ];
      const userRoots = [join(agentHome(), 'skills'), join(homedir(), '.claude', 'skills')];
      const skills = await loadSkillTool({
        cwd,
        // The first root wins a name. A trusted project's skill is the more specific one; an
        // untrusted repository's may add skills, never stand in for the user's own of that name
        // (as its agent files may not): a cloned `deploy` skill would rewrite what `deploy` means.
        roots:
          options.workspaceTrusted === false
            ? [...userRoots, ...projectRoots]
            : [...projectRoots, ...userRoots],
        onWarning: (warning) => log(`skills: ${warning}`),
      });
      if (skills.tool !== undefined) {
        tools.push(skills.tool);
        sources.push(
          `skill (1 tool, ${skills.skills.length} skills): ${skills.skills.map((s) => s.name).join(', ')}`,
        );
      }
    }
    // The rules learn the tools so far: a sandboxed server's start asks them what to hide (a
    // path rule names its tools' families only once the policy knows the tools).
    options.beforeMcpServers?.(tools);
    const fromFlag =
      options.mcpConfig === undefined
        ? []
        : await readMcpConfig(options.mcpConfig, { home: homedir(), env: process.env }, log);
    const flagged = new Set(fromFlag.map((server) => server.name));
    const servers = [
      ...(options.mcpServers ?? []).filter((server) => !flagged.has(server.name)),
      ...fromFlag,
    ];
    // The keys and tokens their configurations hold never reach the model or a file.
    redactAlso(mcpServerSecrets(servers));
    for (const { name, transport } of servers) {
      const notice =
        transport.type === 'stdio' ? argumentKeyNotice(name, transport.args ?? []) : undefined;
      if (notice !== undefined) log(notice);
    }
    const mcp = await connectMcpServers(
      {
        servers: placeUserServers(servers, { trusted: options.workspaceTrusted !== false, log }),
        projectRoot: options.projectRoot ?? cwd,
        choice,
        timeoutSeconds: options.mcpTimeoutSeconds,
        interactions: options.mcpInteractions,
        confirmToolChanges: options.confirmMcpToolChanges,
        // A server that asks for the sandbox hides what bash's hides: the credential stores, the
        // CLI's state, what the read rules deny (by path and pattern), read-only what the write
        // rules protect; it writes only its cwd. Required: a server that asked for it never runs
        // without it.
        sandboxOptions: (network, serverCwd) => {
          const state = agentState;
          return {
            mode: 'required',
            network,
            writableRoots: [serverCwd],
            protectGitDirectories: options.sandboxProtect?.git !== false,
            protectStartupFiles: options.sandboxProtect?.startupFiles !== false,
            protectAutoRunFiles: options.sandboxProtect?.autoRunFiles !== false,
            secretPaths: state.secretPaths,
            readableRoots: state.readableRoots,
            ...(options.hiddenPaths === undefined ? {} : { hiddenPaths: options.hiddenPaths }),
            ...(options.readOnlyPaths === undefined
              ? {}
              : { readOnlyPaths: options.readOnlyPaths }),
            ...(options.hiddenPatterns === undefined
              ? {}
              : { hiddenPatterns: options.hiddenPatterns }),
            ...(options.readOnlyPatterns === undefined
              ? {}
              : { readOnlyPatterns: options.readOnlyPatterns }),
            onWarning: (message: string) => log(message),
          };
        },
        log,
      },
      (adapter) => adapters.push(adapter),
    );
    tools.push(...mcp.tools);
    sources.push(...mcp.sources);
    const documents = new Map<string, readonly string[] | undefined>();
    for (const { spec, name } of options.openapi) {
      // Loaded only when used, like the MCP SDK.
      const openapi = await import('@agent/tools-openapi');
      const apiOptions = {
        ...(name === undefined ? {} : { name }),
        // A document's URL may carry the user's key (`?api_key=…`): never printed.
        onWarning: (message: string) =>
          log(`openapi ${name ?? urlWithoutCredentials(spec)}: ${message}`),
      };
      let adapter: OpenApiToolAdapter;
      try {
        adapter = /^https?:\/\//i.test(spec)
          ? await openapi.OpenApiToolAdapter.fromUrl(spec, apiOptions)
          : await openapi.OpenApiToolAdapter.fromFile(spec, apiOptions);
      } catch (error) {
        throw new CliError(errorMessage(error));
      }
      const chosen = adapter.tools.filter((tool) =>
        choice.hasFamilyTool('openapi', adapter.name, tool.name),
      );
      documents.set(
        adapter.name,
        adapter.tools.map((tool) => tool.name),
      );
      // A document with no operations (a spec's `paths: {}`, one whose operations are all
      // webhooks or callbacks) added nothing without a word: said, so the model's "I have no such
      // tool" is not the first the user hears of it.
      if (adapter.tools.length === 0)
        log(
          `openapi ${name ?? urlWithoutCredentials(spec)}: the document has no operations under "paths", so it adds no tools`,
        );
      tools.push(...chosen);
      sources.push(`openapi ${adapter.name} (${chosen.length})`);
    }
    reportUnmatched(choice, 'openapi', documents, log);
  } catch (error) {
    await close();
    throw error;
  }
  // Reads `tools` at each call: the session adds its own (sub-agents, config…) to this array later.
  if (choice.has('introspect')) {
    tools.push(createIntrospectTool({ tools: () => tools }));
    sources.push('introspect (1)');
  }
  for (const name of choice.namedTools())
    if (Object.hasOwn(unavailable, name) && !tools.some((tool) => tool.name === name))
      log(`tools: ${name} is not available here (${unavailable[name]})`);
  const withheld = withheldVariableNames(process.env, { pass: passEnv });
  return { tools, sources, sandbox, mcp: adapters, choice, close, withheld };
}

/** Names shown by {@link withheldNotice} before it counts the rest. */
const shownWithheldNames = 12;

/**
 * The start line naming the variables withheld from the tools (never their values): a key of no
 * known format is withheld because its value looks random, and so is an id that only looks like
 * one — the user learns both here, and how to pass one. Undefined when nothing is withheld.
 */
export function withheldNotice(names: readonly string[]): string | undefined {
  if (names.length === 0) return undefined;
  const shown = names.slice(0, shownWithheldNames).join(', ');
  const rest = names.length - shownWithheldNames;
  return `credentials withheld from tools (${names.length}): ${shown}${rest > 0 ? ` and ${rest} more` : ''} — to pass one: --pass-env NAME`;
}

/** Why a tool a list names may not be made (the others of loadTools always are when chosen). */
const unavailable: Record<string, string> = {
  web_search: 'it needs a search backend: BRAVE_API_KEY, TAVILY_API_KEY or SEARXNG_URL',
  python_repl: 'no python3 on the PATH',
  skill: "no skills found in .agent/skills, .claude/skills or the user's skills folders",
};

/**
 * What bash's sandbox looks for at each command for `policy`'s rules: the read and write rules'
 * patterns that name no one path (`Read(*.pem)`), each with the policy's own check, so a command
 * that reads `*.pem` by a name no rule sees (`grep -r . .`) finds them hidden (read-only).
 */
export function sandboxPatterns(
  policy: PermissionPolicy,
): Pick<Parameters<typeof loadTools>[0], 'hiddenPatterns' | 'readOnlyPatterns'> {
  const family = (kind: 'read' | 'write') => () => {
    const patterns = policy.pathPatternsToHide(kind);
    return patterns.length === 0
      ? undefined
      : { patterns, matches: (path: string) => policy.isPathDenied(path, kind) };
  };
  return { hiddenPatterns: family('read'), readOnlyPatterns: family('write') };
}
