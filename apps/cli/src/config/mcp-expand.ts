// `~` and `${VAR}` in an `mcpServers` entry, as people write them: `"command": "~/bin/server"`,
// and Claude Code's `.mcp.json` expansion (`${VAR}`, `${VAR:-default}` in command, args, env, url
// and headers: `"Authorization": "Bearer ${GITHUB_PAT}"`). Before, both reached the server as
// typed: `spawn ~/bin/server ENOENT`, a literal `${GITHUB_PAT}` sent as the token.
//
// A leading `~` is the user's home in every file. Variables are expanded only in the user's own
// files (their settings, `--mcp-config`): a project's file that names `${ANTHROPIC_API_KEY}` in a
// URL would hand the user's key to whatever server the repository chose, and what a trusted folder
// runs is pinned by its text, not by the values the user's environment gives it. Such a server is
// left out with a line saying where to put it instead.

/** What an entry's strings are expanded with. */
export interface McpExpansion {
  /** The user's home, for a leading `~`. */
  readonly home: string;
  /** The environment `${VAR}` reads; undefined: variables are not expanded (a project's file). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Thrown for a variable that cannot be expanded; its message follows `server "name" `. */
export class McpExpansionError extends Error {
  override name = 'McpExpansionError';
}

const variable = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** `~` or `~/…` at the start of a path-like value (command, cwd, an argument) → the home. */
export function expandHome(value: string, expansion: McpExpansion): string {
  if (value === '~') return expansion.home;
  if (value.startsWith('~/')) return `${expansion.home}${value.slice(1)}`;
  return value;
}

/**
 * `${VAR}` and `${VAR:-default}` in `value` (`where` names the key for the error). An unset
 * variable without a default is an error, as in Claude Code: a server given an empty token fails
 * later and less clearly.
 */
export function expandVariables(value: string, where: string, expansion: McpExpansion): string {
  const named = [...value.matchAll(variable)];
  if (named.length === 0) return value;
  const env = expansion.env;
  if (env === undefined) {
    const names = [...new Set(named.map((match) => `\${${match[1]}}`))].join(', ');
    throw new McpExpansionError(
      `names ${names} in "${where}": variables in a project's file are not expanded (they would give your environment's values, keys among them, to a server the repository chose); put the server in your own settings or an --mcp-config file, where they are`,
    );
  }
  return value.replace(variable, (_match, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined && found !== '') return found;
    if (fallback !== undefined) return fallback;
    throw new McpExpansionError(
      `names \${${name}} in "${where}", which is not set (export ${name}=…, or write \${${name}:-default})`,
    );
  });
}
