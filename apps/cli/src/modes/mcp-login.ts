// `agent mcp login <server>`: signs in to one HTTP MCP server in the browser and keeps the token,
// so runs that nobody can sign in from (-p with piped input, CI, agent mcp serve) can use it.
// The server is found as a session finds it: --mcp-config, then the settings and the project's
// .mcp.json as far as the folder is trusted.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { errorMessage } from '@agent/core';
import { agentHome } from '../config/agent-home.js';
import type { CliOptions } from '../config/args.js';
import { CliError } from '../config/cli-error.js';
import { type McpServerEntry, mcpServerSecrets, readMcpConfig } from '../config/mcp-servers.js';
import { openInBrowser } from '../ui/mcp-interactions.js';
import { redactAlso } from '../ui/redaction.js';

/** Whether the project holds configuration that could name MCP servers (left out untrusted). */
function hasOwnConfiguration(root: string | undefined): boolean {
  if (root === undefined) return false;
  return ['.mcp.json', '.agent/settings.json', '.agent/settings.local.json'].some((file) =>
    existsSync(join(root, file)),
  );
}

/** The server named `name`: --mcp-config's first, as in a session; a clear error when none. */
async function serverNamed(options: CliOptions, name: string): Promise<McpServerEntry> {
  const fromFlag =
    options.mcpConfig === undefined
      ? []
      : await readMcpConfig(options.mcpConfig, { home: homedir(), env: process.env }, (line) =>
          process.stderr.write(`${line}\n`),
        );
  const servers = [...fromFlag, ...(options.mcpServers ?? [])];
  const server = servers.find((each) => each.name === name);
  if (server !== undefined) return server;
  const known = [...new Set(servers.map((each) => each.name))];
  const untrusted =
    options.workspaceTrusted === false && hasOwnConfiguration(options.projectRoot)
      ? " (this folder's own configuration is not trusted: agent trust, or --trust for this once)"
      : '';
  throw new CliError(
    known.length === 0
      ? `No MCP server "${name}": none is configured (--mcp-config, settings, .mcp.json)${untrusted}`
      : `No MCP server "${name}" (there are: ${known.join(', ')})${untrusted}`,
  );
}

/** Signs in to the server `options.mcpLoginServer`; the exit code. */
export async function runMcpLogin(
  options: CliOptions,
  log: (line: string) => void,
): Promise<number> {
  const name = options.mcpLoginServer ?? '';
  const server = await serverNamed(options, name);
  if (server.transport.type !== 'http')
    throw new CliError(
      `mcp ${name} is started as a command, not reached at a URL: there is no sign-in for it`,
    );
  redactAlso(mcpServerSecrets([server]));
  // Loaded only when used: the MCP SDK is a large import.
  const { McpToolAdapter, fileTokenStore } = await import('@agent/tools-mcp');
  const tokens = join(agentHome(), 'mcp-tokens.json');
  let signedIn = false;
  let adapter: Awaited<ReturnType<typeof McpToolAdapter.connect>>;
  try {
    adapter = await McpToolAdapter.connect({
      name,
      ...(options.mcpTimeoutSeconds === undefined
        ? {}
        : { connectTimeoutMs: Math.round(options.mcpTimeoutSeconds * 1000) }),
      transport: {
        ...server.transport,
        oauth: {
          openUrl: (url) => {
            signedIn = true;
            const opened = openInBrowser(url.href);
            log(
              `mcp ${name} needs authorization: ${opened ? 'opened in your browser; if it did not open, visit' : 'open'} ${url.href}`,
            );
          },
          store: fileTokenStore(tokens),
        },
      },
    });
  } catch (error) {
    throw new CliError(`mcp ${name}: sign-in failed: ${errorMessage(error)}`);
  }
  await adapter.close();
  log(
    signedIn
      ? `mcp ${name}: signed in; the token is kept in ${tokens} for later runs`
      : `mcp ${name}: already signed in, or it needs no sign-in (it answered without one)`,
  );
  return 0;
}
