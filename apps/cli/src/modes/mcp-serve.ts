/**
 * `agent mcp serve`: the built-in tools (sandboxed, confined to --cwd) served to other MCP
 * clients, over stdio or Streamable HTTP on 127.0.0.1 for whoever holds the bearer token, with
 * the permission rules of the flags applied on this side: only the tools the mode and rules can
 * ever allow are listed, and a call they do not allow is refused (nobody is here to ask) with
 * the flag that would allow it. The command hooks of the settings files guard and see the served
 * calls as they do a session's (PreToolUse, PostToolUse), contained as a session's are.
 */
import { randomUUID } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import {
  AgentError,
  type AnyAgentTool,
  errorMessage,
  type PermissionGate,
  type PermissionMode,
  PermissionPolicy,
} from '@agent/core';
import {
  generateBearerToken,
  type HttpServeAuth,
  type HttpToolServer,
  readBearerTokenFile,
  serveHttp,
  serveStdio,
} from '@agent/tools-mcp/serve';
import { isWholesaleFolder, realFolder } from '@agent/workspace-trust';
import { agentHome } from '../config/agent-home.js';
import { type CliOptions, UsageError } from '../config/args.js';
import { CliError } from '../config/cli-error.js';
import { denyTypoRefusal } from '../config/deny-typos.js';
import { redactingGate, redactingHooks } from '../session/result-redaction.js';
import { approvalHint } from '../session/session.js';
import { createSessionHooks } from '../session/session-hooks.js';
import { loadTools, sandboxPatterns } from '../session/tool-sources.js';
import { stderrIsTerminal, type WrittenToken, writeServeToken } from './serve-token.js';

/** Serves until stdin ends (stdio) or the process is interrupted; returns the exit code. */
export async function runMcpServe(
  options: CliOptions,
  log: (line: string) => void,
): Promise<number> {
  const mode = options.mode ?? 'read-only';
  refuseWholesaleStart(options);
  const policy = await servePolicy(options, mode);
  // Read before anything starts: a refused token file is a usage problem, not a half-started server.
  const auth = options.serveHttpPort === undefined ? undefined : await httpAuth(options);
  const tools = await loadTools(
    {
      ...options,
      hiddenPaths: () => policy.pathsToHide('read'),
      readOnlyPaths: () => policy.pathsToHide('write'),
      ...sandboxPatterns(policy),
    },
    log,
  );
  policy.setTools(tools.tools);
  const unmatchable = policy.unmatchableRules();
  const everyTool = options.tools === undefined || options.tools.length === 0;
  const typo = denyTypoRefusal(unmatchable, options.denyFlags ?? options.deny, everyTool);
  if (typo !== undefined) {
    await tools.close();
    throw new CliError(typo);
  }
  for (const problem of unmatchable) log(`warning: ${problem}`);
  const served = servedTools(tools.tools, policy, mode, log);
  // The hooks a session runs, in the same containment (sandbox per hooksSandbox and trust, pins,
  // passEnv); their notices go to `log` (stderr: stdout is the JSON-RPC channel of stdio). Each
  // MCP client session gets them with its own session id (forSession), in this one sandbox.
  const {
    commandHooks,
    sandbox: hooksSandbox,
    recordChanges,
  } = createSessionHooks(options, {
    id: `mcp-serve-${randomUUID()}`,
    projectRoot: options.projectRoot ?? resolve(options.cwd),
    log,
  });
  const closeAll = async () => {
    await tools.close();
    recordChanges();
    await hooksSandbox?.close();
  };
  const gate = refusalNamingTheFlag(policy);
  const limits = options.serveLimits ?? {};
  const server = {
    tools: served,
    ...(limits.maxConcurrentCalls === undefined
      ? {}
      : { maxConcurrentCalls: limits.maxConcurrentCalls }),
    ...(limits.maxQueuedCalls === undefined ? {} : { maxQueuedCalls: limits.maxQueuedCalls }),
    forSession: (sessionId: string) => {
      const hooks = commandHooks?.forSession(`mcp-serve-${sessionId}`);
      return {
        // A PreToolUse hook's refusal is what the client reads: redacted, as a session's model reads it.
        permissionGate: redactingGate(hooks === undefined ? gate : hooks.wrapGate(gate)),
        // The client's model must not read a credential of this process's environment either, nor
        // one a PostToolUse hook adds to a result.
        hooks: redactingHooks(hooks?.agentHooks),
      };
    },
    isPathDenied: policy.isPathDenied,
    name: 'agent',
    instructions: `Tools of @agent/cli working in ${options.cwd}.`,
  };
  let stop = (_why?: Error) => {};
  // Why it stopped: undefined for a signal or the input's end, the error when stdin failed.
  const stopped = new Promise<Error | undefined>((resolve) => {
    stop = resolve;
    process.once('SIGINT', () => resolve(undefined));
    process.once('SIGTERM', () => resolve(undefined));
  });
  let close: () => Promise<void>;
  if (auth === undefined) {
    const stdio = await serveStdio(server);
    close = stdio.close;
    // Ends with its connection, whatever stopped it: a client's message too large to read would
    // otherwise leave a server reading nothing, alive as long as a background command ran.
    void stdio.ended.then(stop);
    log(`agent mcp serve: ${served.length} tools over stdio (mode ${mode})`);
    // Typed at a terminal, it would wait silently for JSON-RPC that never comes.
    if (process.stdin.isTTY === true)
      log(
        'agent mcp serve: waiting for an MCP client on stdin — this command is started by a client (e.g. claude mcp add agent -- agent mcp serve), not typed at; agent mcp serve --help shows how. Ctrl-C stops it.',
      );
  } else {
    const http = await serveHttp({
      ...server,
      port: options.serveHttpPort ?? 0,
      auth,
      ...(limits.maxPipelinedRequests === undefined
        ? {}
        : { maxPipelinedRequests: limits.maxPipelinedRequests }),
      ...(limits.sessionIdleMinutes === undefined
        ? {}
        : { sessionIdleMs: limits.sessionIdleMinutes * 60_000 }),
    }).catch(async (error: unknown) => {
      await closeAll();
      // A port in use (here or on [::1]) is the user's to change, not a crash with a stack.
      throw AgentError.isInstance(error)
        ? new CliError(`agent mcp serve: ${error.message}`)
        : error;
    });
    // A new token goes to a terminal only; anywhere else, into a file only the user can read.
    let written: WrittenToken | undefined;
    if (http.token !== undefined && options.serveTokenFile === undefined && !stderrIsTerminal())
      try {
        written = writeServeToken(agentHome(), Number(new URL(http.url).port), http.token);
      } catch (error) {
        await http.close();
        await closeAll();
        throw error;
      }
    close = async () => {
      written?.remove();
      await http.close();
    };
    log(`agent mcp serve: ${served.length} tools at ${http.url} (mode ${mode})`);
    for (const line of howToConnect(http, options, written)) log(line);
  }
  const why = await stopped;
  await close();
  await closeAll();
  if (why === undefined) return 0;
  log(`agent mcp serve: stopped: ${errorMessage(why)}`);
  return 1;
}

/**
 * Refuses to serve `/` or the home folder as the workspace unless `--cwd` named it: clients start
 * stdio servers in a folder of their own choosing (Claude Desktop and others in `/`, some in the
 * home), and the file tools and bash would then reach every file of the user's — their
 * documents, other projects, other users' readable files — where the user meant one project.
 */
function refuseWholesaleStart(options: CliOptions): void {
  if (options.cwdExplicit === true || !isWholesaleFolder(options.cwd)) return;
  const which =
    realFolder(options.cwd) === realFolder(homedir()) ? 'your home folder' : 'the root folder /';
  throw new UsageError(
    `agent mcp serve was started in ${which} (${options.cwd}), which would make every file under it the served workspace — MCP clients start their servers in a folder of their own choosing. Name the folder to serve: agent mcp serve --cwd <project folder> (--cwd ${options.cwd} if you do mean all of it)`,
  );
}

async function servePolicy(options: CliOptions, mode: PermissionMode): Promise<PermissionPolicy> {
  const cwd = resolve(options.cwd);
  // File tools' subjects are real paths: relative path rules resolve against the real root.
  const workspaceRoot = await realpath(cwd).catch(() => cwd);
  try {
    // No approver: a call that would need asking is refused (see refusalNamingTheFlag).
    return new PermissionPolicy({
      mode,
      allow: options.allow,
      ask: options.ask,
      deny: options.deny,
      workspaceRoot,
      homeDirectory: homedir(),
    });
  } catch (error) {
    if (AgentError.isInstance(error)) throw new UsageError(error.message);
    throw error;
  }
}

/** The bearer token `--http` requires: a new one, the one in `--token-file`, or none (`--no-auth`, warned). */
async function httpAuth(options: CliOptions): Promise<HttpServeAuth> {
  if (options.serveNoAuth === true) return 'none';
  // A new token is printed on a terminal, or written to a file only the user can read (serve-token.ts).
  if (options.serveTokenFile === undefined) return { token: generateBearerToken() };
  try {
    return { token: await readBearerTokenFile(resolve(options.serveTokenFile)) };
  } catch (error) {
    if (AgentError.isInstance(error)) throw new CliError(error.message);
    throw error;
  }
}

/**
 * Tools of the CLI's own screen: a client would be told its message was delivered, and nobody
 * would see it.
 */
const screenOnlyTools = new Set(['send_user_message']);

/** The tools the mode and rules can ever allow; the others are named once, with what would serve them. */
function servedTools(
  tools: readonly AnyAgentTool[],
  policy: PermissionPolicy,
  mode: PermissionMode,
  log: (line: string) => void,
): AnyAgentTool[] {
  const forClients = tools.filter((tool) => !screenOnlyTools.has(tool.name));
  const served = forClients.filter((tool) => policy.couldAllow(tool));
  const left = forClients.filter((tool) => !served.includes(tool));
  if (left.length > 0)
    log(
      `agent mcp serve: not serving ${left.map((tool) => tool.name).join(', ')} — mode ${mode} and the rules never allow them (--mode with their tier, or --allow <tool>, serves them)`,
    );
  return served;
}

/**
 * The policy's gate, with the refusal of a call that would need a question (there is nobody to
 * ask) naming the `--allow` rule or `--mode` that would allow it, as `-p` does.
 */
function refusalNamingTheFlag(policy: PermissionPolicy): PermissionGate {
  return async (request) => {
    const outcome = await policy.check(
      request,
      request.signal === undefined ? {} : { signal: request.signal },
    );
    if (outcome.behavior === 'deny' && outcome.decidedBy === 'no-approver')
      return {
        behavior: 'deny',
        reason: `Needs approval, and agent mcp serve cannot ask: ${approvalHint(request, outcome.rule)}`,
      };
    return outcome;
  };
}

/**
 * Printed once at start, on stderr: where the token is (itself, when generated here and stderr is
 * a terminal) and a client configuration.
 */
function howToConnect(
  http: HttpToolServer,
  options: CliOptions,
  written: WrittenToken | undefined,
): string[] {
  if (http.token === undefined)
    return [
      `agent mcp serve: WARNING: --no-auth: any process of yours that can reach this port can call these tools as you (anything you run, a port you forward)${process.platform === 'linux' ? ", and root's; other users' processes are refused" : ', and so can the other users of this machine'}. Drop --no-auth to require a bearer token.`,
    ];
  const fromFile = options.serveTokenFile ?? written?.path;
  // A token in a file is not echoed into terminals and logs.
  const shown = fromFile === undefined ? http.token : `<the token in ${fromFile}>`;
  const entry = {
    mcpServers: {
      agent: { type: 'http', url: http.url, headers: { Authorization: `Bearer ${shown}` } },
    },
  };
  return [
    fromFile === undefined
      ? 'Clients must send this bearer token, new for this run (shown once): Authorization: Bearer ' +
        http.token
      : written !== undefined
        ? `Clients must send the bearer token in ${written.path}, new for this run (not printed: stderr is not a terminal, and whoever reads it may not be you; the file goes when the server stops): Authorization: Bearer <token>`
        : `Clients must send the token in ${fromFile}: Authorization: Bearer <token>`,
    'As an mcpServers entry (Claude Code, Cursor, agent --mcp-config):',
    `  ${JSON.stringify(entry)}`,
    // The Inspector takes headers only as arguments, which every user of the machine can read.
    `MCP Inspector CLI (a quick check: the token is then in the process list, which other users can read): npx @modelcontextprotocol/inspector --cli ${http.url} --transport http --header "Authorization: Bearer ${shown}" --method tools/list`,
  ];
}
