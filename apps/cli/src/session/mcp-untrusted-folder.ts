// The user's own stdio MCP servers in a folder the user has not trusted. They are the user's, but
// whatever they do in the folder runs what it holds: `git status` there runs its core.fsmonitor,
// hooks and filters, `npx prettier` its node_modules/.bin, `python -m` its modules, `make` its
// Makefile — as the user, outside any sandbox, before the user trusted anything. Two ways lead a
// server into the folder without a word of the user's: its working directory, and the roots the
// CLI lists for it (servers that index, lint or watch a project start on those at once).
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import type { McpServerEntry } from '../config/mcp-servers.js';

/**
 * The servers as they start in the folder. Each of the user's stdio servers (settings,
 * `--mcp-config`) that runs outside the OS sandbox starts in the home directory unless its entry
 * names an absolute `cwd` — in a trusted folder too: launchers resolve what they run from their
 * working directory (`npx` the folder's `node_modules/.bin` and `.npmrc`, `python -m` its
 * modules, `uvx` its `uv.toml`), which any sandboxed command may write, and the server runs it
 * outside the sandbox at the next start or reconnect. A trusted folder is still listed as a root
 * (servers that work on a project get it that way). In a folder not trusted such a server is
 * listed no roots either (`roots/list` answers none; a call may still name a path, asked about as
 * any call is), and one whose entry says `"sandbox"` starts in the home too, writing only where
 * it would have started. Said once when the folder is not trusted; the project's own servers are
 * not here (they start in the project root, pinned by trust).
 */
export function placeUserServers(
  servers: readonly McpServerEntry[],
  options: { trusted: boolean; log: (line: string) => void },
): McpServerEntry[] {
  const moved: string[] = [];
  const rootless: string[] = [];
  const placed = servers.map((server) => {
    if (server.transport.type !== 'stdio' || server.baseDir !== undefined) return server;
    let entry = server;
    if (server.sandbox === undefined && !options.trusted) {
      rootless.push(server.name);
      entry = { ...entry, withoutRoots: true };
    }
    // In a trusted folder a sandboxed server starts there: what it runs of it stays in the sandbox.
    if (server.sandbox !== undefined && options.trusted) return entry;
    if (server.transport.cwd !== undefined && isAbsolute(server.transport.cwd)) return entry;
    moved.push(server.name);
    // A sandboxed one still writes only where it would have started, not the whole home.
    const writable = resolve(server.transport.cwd ?? '.');
    return { ...entry, baseDir: homedir(), sandboxWritableRoot: writable };
  });
  if (moved.length > 0 && !options.trusted)
    options.log(
      `mcp: ${moved.join(', ')} start in ${homedir()}, not in this folder: it is not trusted, and launchers such as npx and uvx read a folder's own configuration (.npmrc, uv.toml…); \`agent trust\` lists it as their root`,
    );
  if (rootless.length > 0)
    options.log(
      `mcp: ${rootless.join(', ')} run outside the OS sandbox, so they are not given this folder as a root until you trust it: what a server runs in a folder (git status, npx, python, make) runs the folder's own code (git's fsmonitor and hooks, node_modules/.bin, its modules, its Makefile); \`agent trust\` gives it, "sandbox": { "network": "on" } on a server's entry runs it in the sandbox with it`,
    );
  return placed;
}
