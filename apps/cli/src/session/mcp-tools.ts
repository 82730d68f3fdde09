// The session's MCP servers: each started (unless the tools list leaves out all its tools),
// connected with a notice when slow, its tools pinned (rug pulls) and chosen by the tools list.
import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type AnyAgentTool, errorMessage, normalisePermissionSubjects } from '@agent/core';
import type { SandboxNetwork, SandboxOptions } from '@agent/sandbox';
import { isPathInside } from '@agent/tools-builtin';
import type { McpToolAdapter, McpTransportConfig } from '@agent/tools-mcp';
import { agentHome } from '../config/agent-home.js';
import { CliError } from '../config/cli-error.js';
import { type McpToolChangeQuestion, openMcpPins } from '../config/mcp-pins.js';
import type { McpServerEntry } from '../config/mcp-servers.js';
import type { ToolChoice, ToolFamily } from '../config/tool-choice.js';
import type { McpInteractions } from '../ui/mcp-interactions.js';
import { noticeBudget } from '../ui/notice-budget.js';
import {
  authorizationNeededIn,
  authorizationNeededNotice,
  browserAuthorizationBlocked,
  McpAuthorizationNeeded,
  redactedTokenStore,
} from './mcp-authorization.js';
import { serverStartPin } from './mcp-start-pins.js';

/** Seconds an MCP server has to start and answer `initialize` unless `--mcp-timeout` says otherwise. */
export const defaultMcpTimeoutSeconds = 30;

/** How long a server may take before the user is told it is being waited for, ms. */
const slowConnectNoticeMs = 1000;

/** Whether `path` lies in `folder` by real path (a link in the folder to elsewhere does not). */
function realInside(folder: string, path: string): boolean {
  try {
    return isPathInside(realpathSync(folder), realpathSync(path));
  } catch {
    return false;
  }
}

/**
 * Where a sandboxed server may write: its cwd — but a project's server (placed in the project,
 * its `baseDir`) only inside the project, by real path. A repository's `"cwd": "~"` (or an
 * absolute folder, or a link in the project to one) gave a server the question said ran "in the
 * sandbox" the user's home to write: it wrote `~/.bashrc`. It then writes only the project.
 */
function writableRootOf(server: McpServerEntry, cwd: string | undefined): string {
  if (server.sandboxWritableRoot !== undefined) return server.sandboxWritableRoot;
  const folder = cwd ?? process.cwd();
  const project = server.baseDir;
  return project === undefined || realInside(project, folder) ? folder : project;
}

/**
 * The transport to start: a stdio server placed in its {@link McpServerEntry.baseDir}, in the OS
 * sandbox when its entry asks (`sandboxOptions` says what the sandbox hides, as bash's does).
 */
function placedTransport(
  server: McpServerEntry,
  options: Pick<McpServerOptions, 'sandboxOptions' | 'projectRoot'>,
): McpTransportConfig {
  const { transport, baseDir } = server;
  if (transport.type !== 'stdio') return transport;
  const cwd =
    baseDir === undefined
      ? transport.cwd === undefined
        ? undefined
        : resolve(transport.cwd)
      : resolve(baseDir, transport.cwd ?? '.');
  return {
    ...transport,
    ...(cwd === undefined ? {} : { cwd }),
    // Outside the sandbox, a start after its project files changed is refused (mcp-start-pins.ts).
    ...(server.sandbox !== undefined || options.projectRoot === undefined
      ? {}
      : { beforeStart: serverStartPin(server, options.projectRoot, cwd) }),
    ...(server.sandbox === undefined
      ? {}
      : {
          sandbox: options.sandboxOptions(server.sandbox.network, writableRootOf(server, cwd)),
        }),
  };
}

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

/** The MCP tool's own name: its permission subject is `server/tool` (see McpToolAdapter). */
async function mcpNameOf(tool: AnyAgentTool, server: string): Promise<string | undefined> {
  if (tool.permissionSubjects === undefined) return undefined;
  const subjects = normalisePermissionSubjects(await tool.permissionSubjects({})).subjects;
  const subject = subjects.find((each) => each.startsWith(`${server}/`));
  return subject?.slice(server.length + 1);
}

/**
 * Items of the tools lists naming a server (or document) that is not there, or a tool it does not
 * list: the flag's are an error (this run asked for them), a settings file's a warning (it serves
 * many workspaces).
 */
export function reportUnmatched(
  choice: ToolChoice,
  family: ToolFamily,
  loaded: ReadonlyMap<string, readonly string[] | undefined>,
  log: (line: string) => void,
): void {
  const what = { mcp: 'MCP server', openapi: 'OpenAPI document', agent: 'sub-agent' }[family];
  for (const { item, source, known } of choice.unmatched(family, loaded)) {
    const line =
      known.length === 0
        ? `${source}: "${item}" names no tool: this session has no ${what}`
        : `${source}: "${item}" names no tool (there are: ${known.join(', ')})`;
    if (source === '--tools') throw new CliError(line);
    log(`warning: ${line}`);
  }
}

/** What {@link connectMcpServers} needs of the session. */
export interface McpServerOptions {
  servers: readonly McpServerEntry[];
  choice: ToolChoice;
  timeoutSeconds: number | undefined;
  /** Answers servers' elicitation, sampling, roots and log messages (none: not declared). */
  interactions?: McpInteractions | undefined;
  /** Asked when a server's tools changed since first used; absent: they are left out with a notice. */
  confirmToolChanges?: McpToolChangeQuestion | undefined;
  /** The sandbox of a server whose entry asks for one: `required` (it fails closed), writable `cwd`. */
  sandboxOptions: (network: SandboxNetwork, cwd: string) => Partial<SandboxOptions>;
  /** The project root (real path): the files a server outside the sandbox runs there are pinned at its start. */
  projectRoot?: string | undefined;
  log: (line: string) => void;
}

/**
 * Starts the servers the tools list wants, in parallel; `onConnected` receives each connected
 * adapter at once (so a failure later still closes it). A server that cannot start or connect is
 * reported and skipped. Returns each server's chosen tools and the lines for the banner.
 */
export async function connectMcpServers(
  options: McpServerOptions,
  onConnected: (adapter: McpToolAdapter) => void,
): Promise<{ tools: AnyAgentTool[]; sources: string[] }> {
  const { choice, log } = options;
  // A server none of whose tools the list keeps is not started at all.
  const servers = options.servers.filter((server) => choice.wantsAny('mcp', server.name));
  const loaded = new Map<string, readonly string[] | undefined>(
    options.servers.map((server) => [server.name, undefined]),
  );
  const tools: AnyAgentTool[] = [];
  const sources: string[] = [];
  if (servers.length > 0) {
    // Loaded only when used: the MCP SDK is a large import.
    const { McpToolAdapter, fileTokenStore } = await import('@agent/tools-mcp');
    // HTTP servers that require OAuth: the user authorises in a browser; tokens are kept in a
    // 0600 file so the next session does not ask again.
    const store = redactedTokenStore(fileTokenStore(join(agentHome(), 'mcp-tokens.json')));
    // Each server's tools as first used: a changed or added tool waits for the user (rug pulls).
    const pins = await openMcpPins(join(agentHome(), 'mcp-tool-pins.json'));
    const seconds = options.timeoutSeconds ?? defaultMcpTimeoutSeconds;
    // Nobody to sign in (no terminal, CI): a server that needs it is skipped at once, not waited on.
    const blocked = browserAuthorizationBlocked(options.interactions);
    const listed = new Map<string, Set<string>>();
    const connected = await Promise.allSettled(
      servers.map((server) => {
        const pinned = pins.filterFor(server);
        // Its problems (garbage lines, answers to nothing) on the terminal, bounded.
        const serverLog = noticeBudget(log, { source: `mcp ${server.name}` });
        const names = new Set<string>();
        listed.set(server.name, names);
        return announceSlowConnect(server.name, seconds, log, () =>
          McpToolAdapter.connect({
            name: server.name,
            connectTimeoutMs: Math.round(seconds * 1000),
            // The pins see every listed tool (they record the listing); the list then chooses.
            toolFilter: (tool) => {
              names.add(tool.name);
              return pinned(tool) && choice.hasFamilyTool('mcp', server.name, tool.name);
            },
            transport:
              server.transport.type === 'http'
                ? {
                    ...server.transport,
                    oauth: {
                      openUrl: (url) => {
                        if (blocked !== undefined)
                          throw new McpAuthorizationNeeded(server.name, blocked);
                        options.interactions?.authorize(server.name, url);
                      },
                      store,
                    },
                  }
                : placedTransport(server, options),
            ...options.interactions?.forServer(server.name),
            // Declared all the same (a server may ask), answered with none.
            ...(server.withoutRoots === true && options.interactions !== undefined
              ? { roots: [] }
              : {}),
            onError: (error) => {
              // A sign-in nobody can give here is said once, with what to do (below).
              if (authorizationNeededIn(error) === undefined)
                serverLog(`mcp ${server.name}: ${errorMessage(error)}`);
            },
          }),
        ).then((adapter) => {
          onConnected(adapter);
          return adapter;
        });
      }),
    );
    const adapters: McpToolAdapter[] = [];
    connected.forEach((outcome, index) => {
      const name = servers[index]?.name ?? '?';
      if (outcome.status === 'fulfilled') adapters.push(outcome.value);
      else {
        const needed = authorizationNeededIn(outcome.reason);
        log(
          needed === undefined
            ? `mcp ${name}: could not connect, skipped: ${errorMessage(outcome.reason)}`
            : authorizationNeededNotice(name, needed),
        );
      }
    });
    for (const adapter of adapters) {
      await pins.settle(adapter, { log, confirm: options.confirmToolChanges });
      const kept: AnyAgentTool[] = [];
      const names = listed.get(adapter.name) ?? new Set<string>();
      // The resource tools (list_resources, read_resource) are the adapter's own: chosen here too.
      for (const tool of adapter.tools()) {
        const name = await mcpNameOf(tool, adapter.name);
        if (name === undefined) continue;
        names.add(name);
        if (choice.hasFamilyTool('mcp', adapter.name, name)) kept.push(tool);
      }
      loaded.set(adapter.name, [...names]);
      tools.push(...kept);
      sources.push(`mcp ${adapter.name} (${kept.length})`);
    }
  }
  for (const server of options.servers)
    if (!servers.includes(server)) sources.push(`mcp ${server.name} off (the tools list)`);
  reportUnmatched(choice, 'mcp', loaded, log);
  return { tools, sources };
}
