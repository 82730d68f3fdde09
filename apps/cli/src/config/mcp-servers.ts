// The `mcpServers` shape of config files, `.mcp.json` and settings (Claude Desktop / Cursor), read
// into transports: configuration only — connecting them is the session's tool sources.
import { readFile } from 'node:fs/promises';
import { errorMessage } from '@agent/core';
import type { McpTransportConfig } from '@agent/tools-mcp';
import { CliError } from './cli-error.js';

/** One server of an `mcpServers` config, in the common Claude Desktop / Cursor shape. */
export type McpServerConfig =
  | { command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { url: string; headers?: Record<string, string> };

/** A named MCP server, ready to connect. */
export interface McpServerEntry {
  name: string;
  transport: McpTransportConfig;
  /**
   * Where a stdio server without its own `cwd` starts, and what a relative `cwd` is resolved
   * against: the project root for the project's files (absent: the CLI's working directory).
   */
  baseDir?: string;
}

/** Reads `{ "mcpServers": { name: { command, args, env } | { url, headers } } }` into transports. */
export async function readMcpConfig(path: string): Promise<McpServerEntry[]> {
  let data: unknown;
  try {
    data = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new CliError(`Cannot read the MCP config ${path}: ${errorMessage(error)}`);
  }
  const servers =
    data !== null && typeof data === 'object'
      ? (data as { mcpServers?: unknown }).mcpServers
      : undefined;
  return parseMcpServers(servers, `The MCP config ${path}`);
}

/** An `mcpServers` object (from a config file, `.mcp.json` or settings) into transports. */
export function parseMcpServers(servers: unknown, origin: string): McpServerEntry[] {
  if (servers === null || typeof servers !== 'object' || Array.isArray(servers)) {
    throw new CliError(`${origin} needs an object "mcpServers"`);
  }
  const path = origin;
  return Object.entries(servers as Record<string, unknown>).map(([name, raw]) => {
    const fail = (why: string): never => {
      throw new CliError(`${path}: server "${name}" ${why}`);
    };
    if (raw === null || typeof raw !== 'object') return fail('is not an object');
    const server = raw as Record<string, unknown>;
    if (server.url !== undefined && typeof server.url !== 'string')
      fail('has "url" that is not a string: "url" must be a string (an http(s) URL)');
    if (server.command !== undefined && typeof server.command !== 'string')
      fail('has "command" that is not a string: "command" must be a string (the program to run)');
    if (server.url !== undefined && server.command !== undefined)
      fail('has both "command" and "url": a server is a program to run or a URL, not both');
    if (typeof server.url === 'string') {
      const headers = stringRecord(server.headers);
      if (headers === undefined) fail('has "headers" that are not strings');
      return {
        name,
        transport: { type: 'http', url: server.url, ...(headers == null ? {} : { headers }) },
      };
    }
    if (typeof server.command !== 'string')
      return fail('needs "command" (a program to run) or "url" (an HTTP server)');
    const args = server.args ?? [];
    if (!Array.isArray(args) || args.some((arg) => typeof arg !== 'string'))
      fail('has "args" that are not a list of strings');
    const env = stringRecord(server.env);
    if (env === undefined) fail('has "env" values that are not strings');
    return {
      name,
      transport: {
        type: 'stdio',
        command: server.command,
        args: args as string[],
        ...(env == null ? {} : { env }),
        ...(typeof server.cwd === 'string' ? { cwd: server.cwd } : {}),
      },
    };
  });
}

/** `null` when absent, `undefined` when malformed. */
function stringRecord(value: unknown): Record<string, string> | null | undefined {
  if (value === undefined) return null;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.some(([, item]) => typeof item !== 'string')) return undefined;
  return Object.fromEntries(entries) as Record<string, string>;
}

/** MCP's log levels, least severe first (RFC 5424 order). */
export const mcpLogLevels = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;
export type McpLogLevel = (typeof mcpLogLevels)[number];
