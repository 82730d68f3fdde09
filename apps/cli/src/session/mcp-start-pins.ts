/**
 * The project files a stdio MCP server outside the sandbox runs, pinned at its first start in a
 * session: a later start (a reconnect, after it crashed or was stopped) is refused once any of
 * them changed. A sandboxed command (or a file tool) may rewrite the project's `server.mjs`, or
 * plant `node_modules/.bin/<bin>` for `npx <bin>`; the reconnect ran it as the user, outside the
 * sandbox. Trust pins these files between sessions (trust-scripts.ts); this pins them within one,
 * as hook-file-pins.ts does for hooks.
 */
import { isAbsolute, relative, sep } from 'node:path';
import type { McpServerEntry } from '../config/mcp-servers.js';
import { shimSettingsFiles } from '../config/tool-runner-files.js';
import { pythonPathFolders } from '../config/trust-scripts.js';
import { changedFiles, commandPin, environmentWords } from './hook-file-pins.js';

/**
 * The `beforeStart` of a stdio server's transport: undefined at its first start (which takes the
 * pin) and while its project files are as then; otherwise why it must not start again.
 */
export function serverStartPin(
  server: McpServerEntry,
  projectRoot: string,
  cwd?: string,
): () => string | undefined {
  const { transport } = server;
  if (transport.type !== 'stdio') return () => undefined;
  // Its words are paths from where it starts (`"cwd": "tools"`, `server.mjs`: tools/server.mjs),
  // as its trust pin reads them; a cwd outside the project is not the project's to pin.
  const rest = cwd === undefined ? '..' : relative(projectRoot, cwd);
  const inside = rest !== '..' && !rest.startsWith(`..${sep}`) && !isAbsolute(rest);
  const root = cwd !== undefined && inside ? cwd : projectRoot;
  const command = [transport.command, ...(transport.args ?? [])].join(' ');
  // Its environment is its entry's `env` (servers get no other): `NODE_OPTIONS=--require ./x.cjs`.
  const environment = [
    ...environmentWords(transport.env ?? {}),
    // Found on the CLI's PATH unless its env sets one: a version manager's shim reads the project.
    ...shimSettingsFiles(transport.env?.PATH ?? process.env.PATH),
  ];
  const search = {
    python: pythonPathFolders(transport.env?.PYTHONPATH, root),
    node: pythonPathFolders(transport.env?.NODE_PATH, root),
    perl: pythonPathFolders(transport.env?.PERL5LIB ?? transport.env?.PERLLIB, root),
    ruby: pythonPathFolders(transport.env?.RUBYLIB, root),
  };
  let pinned: string | undefined;
  return () => {
    const now = commandPin(command, root, undefined, environment, search);
    if (pinned === undefined) {
      pinned = now;
      return undefined;
    }
    const files = changedFiles(pinned, now);
    if (files.length === 0) return undefined;
    return `the project files it runs changed since it started in this session (${files.join(', ')}) — a command or the model may have written them, and it runs outside the sandbox; look at them, then start a new session`;
  };
}
