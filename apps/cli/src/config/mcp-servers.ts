// The `mcpServers` shape of config files, `.mcp.json` and settings (Claude Desktop / Cursor), read
// into transports: configuration only — connecting them is the session's tool sources.

import { errorMessage } from '@agent/core';
import type { McpTransportConfig } from '@agent/tools-mcp';
import { absolutePathEntries } from './absolute-path.js';
import { CliError } from './cli-error.js';
import { argumentSecrets, headerSecretName } from './command-secrets.js';
import { expandHome, expandVariables, type McpExpansion, McpExpansionError } from './mcp-expand.js';
import { parseJson, readSettingsText } from './project-file.js';

/** One server of an `mcpServers` config, in the common Claude Desktop / Cursor shape. */
export type McpServerConfig =
  | { command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { url: string; headers?: Record<string, string> };

/** A named MCP server, ready to connect. */
export interface McpServerEntry {
  name: string;
  transport: McpTransportConfig;
  /**
   * A stdio server run in the OS sandbox (`"sandbox": true` or `{ "network": … }`): it writes only
   * its cwd and a private /tmp and reads none of what bash's sandbox hides; its network.
   */
  sandbox?: { network: 'off' | 'on' | { allowHosts: string[] } };
  /**
   * Where a stdio server without its own `cwd` starts, and what a relative `cwd` is resolved
   * against: the project root for the project's files (absent: the CLI's working directory).
   */
  baseDir?: string;
  /**
   * Where a sandboxed stdio server may write when that is not its cwd: the folder a user's server
   * moved out of a folder not trusted would have started in (its cwd is then the home, which the
   * sandbox must not open for writing).
   */
  sandboxWritableRoot?: string;
  /**
   * The server is listed no roots (`roots/list` answers none): a user's server outside the
   * sandbox in a folder not trusted (session/mcp-untrusted-folder.ts).
   */
  withoutRoots?: true;
}

/**
 * Reads `{ "mcpServers": { name: { command, args, env } | { url, headers } } }` into transports;
 * the user's own file: `~` and `${VAR}` are expanded with `expansion`. What was changed on the
 * way (a server's relative PATH entries left out) is said through `log`.
 */
export async function readMcpConfig(
  path: string,
  expansion: McpExpansion,
  log: (line: string) => void,
): Promise<McpServerEntry[]> {
  let data: unknown;
  try {
    const text = await readSettingsText(path);
    if (text === undefined) throw new Error('no such file');
    data = parseJson(text);
  } catch (error) {
    throw new CliError(`Cannot read the MCP config ${path}: ${errorMessage(error)}`);
  }
  const servers =
    data !== null && typeof data === 'object'
      ? (data as { mcpServers?: unknown }).mcpServers
      : undefined;
  const { entries, notices } = parseMcpServers(servers, `The MCP config ${path}`, expansion);
  for (const notice of notices) log(notice);
  return entries;
}

/** The keys a server entry may have: ours, and `type` as Claude Code writes it (checked against the shape). */
const serverKeys = [
  'command',
  'args',
  'env',
  'cwd',
  'sandbox',
  'url',
  'headers',
  'type',
  'disabled',
];
/**
 * Other clients' keys that mean nothing here and are knowingly ignored: their lists of tools to
 * run without asking (Cline's) — here the permission rules decide.
 */
const ignoredServerKeys = ['autoApprove', 'alwaysAllow'];
const urlTypes = ['http', 'streamable-http', 'sse'];

/**
 * An `mcpServers` object (from a config file, `.mcp.json` or settings) into transports. A server
 * with `"disabled": true` is left out; an unknown key is an error naming the file, server and key.
 */
export function parseMcpServers(
  servers: unknown,
  origin: string,
  expansion: McpExpansion,
): { entries: McpServerEntry[]; notices: string[] } {
  // The user's own file (variables expanded): theirs to fix, said at start. A project's never
  // stops the CLI: what cannot be used is left out, said.
  const users = expansion.env !== undefined;
  if (servers === null || typeof servers !== 'object' || Array.isArray(servers)) {
    if (users) throw new CliError(`${origin} needs an object "mcpServers"`);
    return {
      entries: [],
      notices: [`agent: ${origin}: "mcpServers" is not an object; it is not used`],
    };
  }
  const entries: McpServerEntry[] = [];
  const notices: string[] = [];
  for (const [name, raw] of Object.entries(servers as Record<string, unknown>)) {
    try {
      const entry = parseServer(name, raw, origin, expansion);
      if (entry !== undefined) {
        const dropped = keepServerPathAbsolute(entry, expansion.home);
        if (dropped.length > 0)
          notices.push(
            `agent: server "${name}" of ${origin}: PATH entries left out of its env: ${dropped.map((entry) => (entry === '' ? '"" (empty)' : entry)).join(', ')} — they name the folder it starts in, where a command or the repository could put a program of a name it runs`,
          );
        entries.push(entry);
      }
    } catch (error) {
      if (error instanceof McpExpansionError) {
        if (users) throw new CliError(`${origin}: server "${name}" ${error.message}`);
        notices.push(`agent: server "${name}" of ${origin} is left out: it ${error.message}`);
      } else if (error instanceof CliError && !users)
        notices.push(`agent: ${error.message}; the server is left out`);
      else throw error;
    }
  }
  return { entries, notices };
}

/**
 * Drops the relative and empty entries of a stdio server's own `env.PATH` (in place; all of them
 * gone: no PATH of its own, so it gets the CLI's, which has none either): they name the folder
 * the server starts in, and `"env": { "PATH": "./bin:/usr/bin" }` ran a `./bin/node` a sandboxed
 * command wrote there, as the user, outside the sandbox — a file no pin looked at. The entries
 * left out, to say so.
 */
function keepServerPathAbsolute(entry: McpServerEntry, home: string | undefined): string[] {
  const { transport } = entry;
  if (transport.type !== 'stdio' || transport.env?.PATH === undefined) return [];
  const { path, dropped } = absolutePathEntries(transport.env.PATH, home);
  if (dropped.length === 0) return [];
  const { PATH: _relative, ...rest } = transport.env;
  transport.env = path === '' ? rest : { ...rest, PATH: path };
  return dropped;
}

/** One server entry; undefined when it is disabled. */
function parseServer(
  name: string,
  raw: unknown,
  path: string,
  expansion: McpExpansion,
): McpServerEntry | undefined {
  const fail = (why: string): never => {
    throw new CliError(`${path}: server "${name}" ${why}`);
  };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    return fail('is not an object');
  const server = raw as Record<string, unknown>;
  for (const key of Object.keys(server))
    if (!serverKeys.includes(key) && !ignoredServerKeys.includes(key))
      fail(`has an unknown key "${key}" (known: ${serverKeys.join(', ')})`);
  if (server.disabled !== undefined && typeof server.disabled !== 'boolean')
    fail('has "disabled" that is not true or false');
  if (server.disabled === true) return undefined;
  if (server.cwd !== undefined && typeof server.cwd !== 'string')
    fail('has "cwd" that is not a string');
  if (server.type !== undefined) {
    const expected = server.url !== undefined ? urlTypes : ['stdio'];
    if (typeof server.type !== 'string' || !expected.includes(server.type))
      fail(
        `has "type" ${JSON.stringify(server.type)}, but a server with ${server.url !== undefined ? '"url" is of type http, streamable-http or sse' : '"command" is of type stdio'}`,
      );
  }
  if (server.url !== undefined)
    for (const key of ['args', 'env', 'cwd', 'sandbox'])
      if (server[key] !== undefined)
        fail(`has "${key}", which only a server started with "command" takes`);
  if (server.command !== undefined && server.headers !== undefined)
    fail('has "headers", which only a server reached by "url" takes');
  if (server.url !== undefined && typeof server.url !== 'string')
    fail('has "url" that is not a string: "url" must be a string (an http(s) URL)');
  if (server.command !== undefined && typeof server.command !== 'string')
    fail('has "command" that is not a string: "command" must be a string (the program to run)');
  if (server.url !== undefined && server.command !== undefined)
    fail('has both "command" and "url": a server is a program to run or a URL, not both');
  const expand = (value: string, where: string) => expandVariables(value, where, expansion);
  const expandPath = (value: string, where: string) => expand(expandHome(value, expansion), where);
  if (typeof server.url === 'string') {
    const headers = stringRecord(server.headers);
    if (headers === undefined) fail('has "headers" that are not strings');
    const url = expand(server.url, 'url');
    const expandedHeaders =
      headers == null
        ? undefined
        : Object.fromEntries(
            Object.entries(headers).map(([key, value]) => [key, expand(value, `headers.${key}`)]),
          );
    return {
      name,
      transport: {
        type: 'http',
        url,
        ...(expandedHeaders === undefined ? {} : { headers: expandedHeaders }),
      },
    };
  }
  if (typeof server.command !== 'string')
    return fail('needs "command" (a program to run) or "url" (an HTTP server)');
  const args = server.args ?? [];
  if (!Array.isArray(args) || args.some((arg) => typeof arg !== 'string'))
    fail('has "args" that are not a list of strings');
  const env = stringRecord(server.env);
  if (env === undefined) fail('has "env" values that are not strings');
  const expandedEnv =
    env == null
      ? undefined
      : Object.fromEntries(
          Object.entries(env).map(([key, value]) => [key, expand(value, `env.${key}`)]),
        );
  const sandbox = serverSandbox(server.sandbox, fail);
  return {
    name,
    ...(sandbox === undefined ? {} : { sandbox }),
    transport: {
      type: 'stdio',
      command: expandPath(server.command, 'command'),
      args: (args as string[]).map((arg, index) => expandPath(arg, `args[${index}]`)),
      ...(expandedEnv === undefined ? {} : { env: expandedEnv }),
      ...(typeof server.cwd === 'string' ? { cwd: expandPath(server.cwd, 'cwd') } : {}),
    },
  };
}

/** A stdio server's `"sandbox"`: true (network off), false, or `{ "network": "off" | "on" | [hosts] }`. */
function serverSandbox(
  value: unknown,
  fail: (why: string) => never,
): McpServerEntry['sandbox'] | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return { network: 'off' };
  const shape =
    'true, false or { "network": "off" | "on" | ["host", …] } (a sandboxed server has no network unless it says which)';
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return fail(`has "sandbox" that is not ${shape}`);
  const entries = Object.keys(value);
  const unknown = entries.find((key) => key !== 'network');
  if (unknown !== undefined)
    return fail(`has "sandbox" with an unknown key "${unknown}" (known: network)`);
  const network = (value as { network?: unknown }).network ?? 'off';
  if (network === 'off' || network === 'on') return { network };
  if (
    Array.isArray(network) &&
    network.length > 0 &&
    network.every((host) => typeof host === 'string' && host !== '')
  )
    return { network: { allowHosts: network as string[] } };
  return fail(`has "sandbox" whose "network" is not "off", "on" or a list of host names`);
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

/**
 * What the servers' configurations give them that may be a credential, by name: each stdio
 * server's `env` and each URL server's `headers` (a header's value also without its scheme, as
 * `Authorization: Bearer <token>` — a server that echoes the token echoes that part) and its URL's
 * query parameters, and each stdio server's arguments (see {@link argumentSecrets}). Names read
 * `<server>.<key>`; the redaction keeps those a name or value rule judges credentials.
 */
export function mcpServerSecrets(servers: readonly McpServerEntry[]): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const { name, transport } of servers) {
    if (transport.type === 'stdio') {
      for (const [key, value] of Object.entries(transport.env ?? {}))
        secrets[`${name}.${key}`] = value;
      Object.assign(secrets, argumentSecrets(name, transport.args ?? []));
    } else if (transport.type === 'http') {
      for (const [key, value] of Object.entries(transport.headers ?? {})) {
        secrets[headerSecretName(`${name}.`, key, value)] = value;
        const scheme = /^(?:Bearer|Basic|Token)\s+(\S+)$/i.exec(value.trim());
        if (scheme?.[1] !== undefined) secrets[`${name}.${key} token`] = scheme[1];
      }
      Object.assign(secrets, urlSecrets(name, String(transport.url)));
    }
  }
  return secrets;
}

/**
 * A server URL's own credentials: each query parameter (hosted servers take
 * `?api_key=…`, `?token=…`), named `<server>.url <parameter>` so that the name rules judge them
 * (`api_key`, `token` are credentials; `?region=eu` is not). A server echoing the URL it was
 * called at handed the key to the model.
 */
function urlSecrets(name: string, url: string): Record<string, string> {
  const secrets: Record<string, string> = {};
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return secrets;
  }
  // Decoded: what tools hand the model is also matched in its percent-encoded form.
  for (const [parameter, value] of parsed.searchParams) secrets[`${name}.url ${parameter}`] = value;
  return secrets;
}
