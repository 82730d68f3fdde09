import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { type AnyAgentTool, createIntrospectTool, errorMessage } from '@agent/core';
import { createSandbox, type Sandbox, SandboxUnavailableError } from '@agent/sandbox';
import { BackgroundTasks, defaultTools } from '@agent/tools-builtin';
import type { McpToolAdapter, McpTransportConfig } from '@agent/tools-mcp';
import type { OpenApiToolAdapter } from '@agent/tools-openapi';
import { agentHome } from '../config/agent-home.js';
import type { CliOptions } from '../config/args.js';
import { CliError } from '../config/cli-error.js';
import { type McpToolChangeQuestion, openMcpPins } from '../config/mcp-pins.js';
import { type McpServerEntry, readMcpConfig } from '../config/mcp-servers.js';
import { chooseTools } from '../config/tool-choice.js';
import type { McpInteractions } from '../ui/mcp-interactions.js';
import { type LoadedLspTools, loadLspTools } from './lsp-tools.js';

/** Every tool of a session, and how to release what they hold (MCP servers, background commands). */
export interface ToolSet {
  tools: AnyAgentTool[];
  /** One line per source, for the banner. */
  sources: string[];
  /** The OS sandbox bash runs in (its `describe()` is the banner's sandbox line). */
  sandbox: Sandbox;
  /** The connected MCP servers (for `/mcp` and their prompts as slash commands). */
  mcp: McpToolAdapter[];
  close(): Promise<void>;
}

/** The transport to start: a stdio server placed in its {@link McpServerEntry.baseDir}. */
function placedTransport(server: McpServerEntry): McpTransportConfig {
  const { transport, baseDir } = server;
  if (transport.type !== 'stdio' || baseDir === undefined) return transport;
  return { ...transport, cwd: resolve(baseDir, transport.cwd ?? '.') };
}

/** Seconds an MCP server has to start and answer `initialize` unless `--mcp-timeout` says otherwise. */
export const defaultMcpTimeoutSeconds = 30;

/** How long a server may take before the user is told it is being waited for, ms. */
const slowConnectNoticeMs = 1000;

/**
 * Connects one server; when that takes longer than a moment, says which server is being waited
 * for (and for how long at most), and when it answers; a timeout names the server and the flag.
 */
async function announceSlowConnect<T>(
  name: string,
  seconds: number,
  log: (line: string) => void,
  connect: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  let announced = false;
  const timer = setTimeout(() => {
    announced = true;
    log(
      `connecting to MCP server ${name}… (waiting up to ${seconds} s: --mcp-timeout <s> or "mcpTimeout" in settings changes it)`,
    );
  }, slowConnectNoticeMs);
  timer.unref();
  try {
    const connected = await connect();
    if (announced)
      log(
        `connected to MCP server ${name} (${((performance.now() - started) / 1000).toFixed(1)} s)`,
      );
    return connected;
  } catch (error) {
    if (performance.now() - started >= seconds * 1000)
      throw new CliError(
        `no answer within ${seconds} s (--mcp-timeout <s> or "mcpTimeout" in settings gives servers longer)`,
      );
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Builds the session's tools: built-ins in `cwd`, then each MCP server, then each OpenAPI document. */
export async function loadTools(
  options: Pick<
    CliOptions,
    | 'cwd'
    | 'mcpConfig'
    | 'openapi'
    | 'sandbox'
    | 'passEnv'
    | 'workspaceTrusted'
    | 'projectRoot'
    | 'mcpTimeoutSeconds'
    | 'tools'
  > & {
    /** Servers from settings files and `.mcp.json`; `--mcp-config` wins by name. */
    mcpServers?: readonly McpServerEntry[];
    /** Answers servers' elicitation, sampling, roots and log messages (none: not declared). */
    mcpInteractions?: McpInteractions;
    /**
     * Asked when a server's tools changed since they were first used (the REPL); true lets the
     * changed tools through and records them. Absent: they are left out with a notice.
     */
    confirmMcpToolChanges?: McpToolChangeQuestion;
  },
  log: (line: string) => void,
): Promise<ToolSet> {
  const backgroundTasks = new BackgroundTasks();
  const cwd = resolve(options.cwd);
  let sandbox: Sandbox;
  try {
    sandbox = createSandbox({
      mode: options.sandbox,
      writableRoots: [cwd],
      // Commands read this session's spill files at the paths bash gives, and no other's.
      ...backgroundTasks.spillDirectory.sandboxOptions(),
      // The banner says it: no process warning on top.
      onWarning: () => undefined,
    });
  } catch (error) {
    if (SandboxUnavailableError.isInstance(error)) throw new CliError(error.message);
    throw error;
  }
  // Processes the tools start get no credential of this process's environment (the provider's
  // key included) unless --pass-env / settings' passEnv names it. MCP servers get a minimal
  // environment and their own config's `env` instead.
  const passEnv = options.passEnv ?? [];
  const choice = chooseTools(options.tools ?? []);
  const tools: AnyAgentTool[] = defaultTools({
    cwd,
    backgroundTasks,
    bash: { sandbox, passEnv },
    tools: choice.builtin,
  });
  // web_fetch always; web_search when a backend is configured (BRAVE_API_KEY, TAVILY_API_KEY, SEARXNG_URL).
  const web = await import('@agent/tools-web');
  tools.push(web.createWebFetchTool());
  const searchBackend = web.webSearchBackendFromEnv();
  if (searchBackend !== undefined) tools.push(web.createWebSearchTool({ backend: searchBackend }));
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
    const { createReplTools } = await import('@agent/tools-repl');
    const replTools = createReplTools({ cwd, sandbox, passEnv });
    repl = replTools;
    tools.push(...replTools.tools);
    sources.push(
      `repl (${replTools.tools.length}): ${replTools.tools.map((tool) => tool.name).join(', ')}`,
    );
    // Language servers may be the repository's own (node_modules/.bin): outside the sandbox they
    // run only in a folder the user trusts.
    if (sandbox.status.active || options.workspaceTrusted !== false)
      lsp = await loadLspTools(cwd, tools, sandbox, passEnv);
    else sources.push('lsp off (an untrusted folder, and commands are not sandboxed)');
    if (lsp !== undefined) {
      tools.push(...lsp.tools);
      sources.push(lsp.source);
    }
    // Kiro's `code` (--tools kiro or code) maps its operations onto the LSP tools.
    if (choice.code && lsp !== undefined) {
      const { createCodeTool } = await import('@agent/tools-lsp');
      tools.push(createCodeTool(lsp.tools));
      sources.push('code (1): over the lsp tools');
    } else if (choice.code) sources.push('code off (no language server)');
    // Agent Skills in .agent/skills, .claude/skills (the project root, then the user): one `skill` tool.
    const { loadSkillTool } = await import('@agent/tools-skills');
    const projectRoot = options.projectRoot ?? cwd;
    const skills = await loadSkillTool({
      cwd,
      roots: [
        join(projectRoot, '.agent', 'skills'),
        join(projectRoot, '.claude', 'skills'),
        join(agentHome(), 'skills'),
        join(homedir(), '.claude', 'skills'),
      ],
      onWarning: (warning) => log(`skills: ${warning}`),
    });
    if (skills.tool !== undefined) {
      tools.push(skills.tool);
      sources.push(
        `skill (1 tool, ${skills.skills.length} skills): ${skills.skills.map((s) => s.name).join(', ')}`,
      );
    }
    const fromFlag = options.mcpConfig === undefined ? [] : await readMcpConfig(options.mcpConfig);
    const flagged = new Set(fromFlag.map((server) => server.name));
    const servers = [
      ...(options.mcpServers ?? []).filter((server) => !flagged.has(server.name)),
      ...fromFlag,
    ];
    if (servers.length > 0) {
      // Loaded only when used: the MCP SDK is a large import.
      const { McpToolAdapter, fileTokenStore } = await import('@agent/tools-mcp');
      // HTTP servers that require OAuth: the user authorises in a browser; tokens are kept in a
      // 0600 file so the next session does not ask again.
      const store = fileTokenStore(join(agentHome(), 'mcp-tokens.json'));
      // Each server's tools as first used: a changed or added tool waits for the user (rug pulls).
      const pins = await openMcpPins(join(agentHome(), 'mcp-tool-pins.json'));
      const seconds = options.mcpTimeoutSeconds ?? defaultMcpTimeoutSeconds;
      const connected = await Promise.allSettled(
        servers.map((server) =>
          announceSlowConnect(server.name, seconds, log, () =>
            McpToolAdapter.connect({
              name: server.name,
              connectTimeoutMs: Math.round(seconds * 1000),
              toolFilter: pins.filterFor(server),
              transport:
                server.transport.type === 'http'
                  ? {
                      ...server.transport,
                      oauth: {
                        openUrl: (url) =>
                          options.mcpInteractions === undefined
                            ? log(`mcp ${server.name} needs authorization: open ${url.href}`)
                            : options.mcpInteractions.authorize(server.name, url),
                        store,
                      },
                    }
                  : placedTransport(server),
              ...options.mcpInteractions?.forServer(),
              onError: (error) => log(`mcp ${server.name}: ${errorMessage(error)}`),
            }),
          ),
        ),
      );
      // A server that cannot start or connect is reported and skipped; the others are used.
      connected.forEach((outcome, index) => {
        if (outcome.status === 'fulfilled') adapters.push(outcome.value);
        else
          log(
            `mcp ${servers[index]?.name ?? '?'}: could not connect, skipped: ${errorMessage(outcome.reason)}`,
          );
      });
      for (const adapter of adapters) {
        await pins.settle(adapter, { log, confirm: options.confirmMcpToolChanges });
        const mcpTools = adapter.tools();
        tools.push(...mcpTools);
        sources.push(`mcp ${adapter.name} (${mcpTools.length})`);
      }
    }
    for (const { spec, name } of options.openapi) {
      // Loaded only when used, like the MCP SDK.
      const openapi = await import('@agent/tools-openapi');
      const apiOptions = {
        ...(name === undefined ? {} : { name }),
        onWarning: (message: string) => log(`openapi ${name ?? spec}: ${message}`),
      };
      let adapter: OpenApiToolAdapter;
      try {
        adapter = /^https?:\/\//i.test(spec)
          ? await openapi.OpenApiToolAdapter.fromUrl(spec, apiOptions)
          : await openapi.OpenApiToolAdapter.fromFile(spec, apiOptions);
      } catch (error) {
        throw new CliError(errorMessage(error));
      }
      tools.push(...adapter.tools);
      sources.push(`openapi ${adapter.name} (${adapter.tools.length})`);
    }
  } catch (error) {
    await close();
    throw error;
  }
  // Reads `tools` at each call: the session adds its own (sub-agents, config…) to this array later.
  if (choice.introspect) {
    tools.push(createIntrospectTool({ tools: () => tools }));
    sources.push('introspect (1)');
  }
  return { tools, sources, sandbox, mcp: adapters, close };
}
