/**
 * `agent mcp serve`: the built-in tools (sandboxed, confined to --cwd) served to other MCP
 * clients, over stdio or Streamable HTTP on 127.0.0.1, with the permission rules of the flags
 * applied on this side: a call the rules do not allow is refused (nobody is here to ask).
 */
import { AgentError, PermissionPolicy } from '@agent/core';
import { serveHttp, serveStdio } from '@agent/tools-mcp/serve';
import { type CliOptions, UsageError } from './args.js';
import { loadTools } from './tool-sources.js';

/** Serves until stdin ends (stdio) or the process is interrupted; returns the exit code. */
export async function runMcpServe(
  options: CliOptions,
  log: (line: string) => void,
): Promise<number> {
  let policy: PermissionPolicy;
  try {
    // Without an approver, a call that would need asking is refused with the rule to add.
    policy = new PermissionPolicy({
      mode: options.mode ?? 'read-only',
      allow: options.allow,
      ask: options.ask,
      deny: options.deny,
    });
  } catch (error) {
    if (AgentError.isInstance(error)) throw new UsageError(error.message);
    throw error;
  }
  const tools = await loadTools(options, log);
  const served = {
    tools: tools.tools,
    permissionGate: policy.gate,
    name: 'agent',
    instructions: `Tools of @agent/cli working in ${options.cwd}.`,
  };
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
    if (options.serveHttpPort === undefined) process.stdin.once('end', () => resolve());
  });
  let close: () => Promise<void>;
  if (options.serveHttpPort === undefined) {
    ({ close } = await serveStdio(served));
    log(
      `agent mcp serve: ${tools.tools.length} tools over stdio (mode ${options.mode ?? 'read-only'})`,
    );
  } else {
    const http = await serveHttp({ ...served, port: options.serveHttpPort });
    close = http.close;
    log(
      `agent mcp serve: ${tools.tools.length} tools at ${http.url} (mode ${options.mode ?? 'read-only'})`,
    );
  }
  await stopped;
  await close();
  await tools.close();
  return 0;
}
