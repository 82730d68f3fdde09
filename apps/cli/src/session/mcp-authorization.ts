// An HTTP MCP server that answers 401 asks the user to authorise the CLI in a browser, and the
// connection waits for the browser to come back (up to five minutes). In a run nobody can answer —
// no terminal (`-p` fed by a pipe, a scheduled job, `agent mcp serve`), or CI — that wait was five
// minutes of nothing before the run went on without the server. Such a run skips the server at
// once instead, and says how to authorise it where someone can; tokens kept by an earlier
// authorisation are still used (a refresh needs no browser).
import type { McpStoredAuth, McpTokenStore } from '@agent/tools-mcp';
import type { McpInteractions } from '../ui/mcp-interactions.js';
import { redactAlso } from '../ui/redaction.js';

/** Thrown from `openUrl` when a server needs the user's authorization and nobody can give it. */
export class McpAuthorizationNeeded extends Error {
  override readonly name = 'McpAuthorizationNeeded';
  /** Why nobody can authorise here (`this run has no terminal…`). */
  readonly why: string;

  constructor(server: string, why: string) {
    super(`mcp ${server} needs authorization, and ${why}`);
    this.why = why;
  }
}

/** Whether `CI` says this is a CI job (set, and not `false` or `0`). */
function isCi(env: NodeJS.ProcessEnv): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== 'false' && value !== '0';
}

/**
 * Why nobody can authorise an MCP server in a browser during this run, or undefined when someone
 * can: a terminal to tell them on (the interactive session, or `-p` typed in one) and not CI.
 */
export function browserAuthorizationBlocked(
  interactions: McpInteractions | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (interactions?.interactive !== true)
    return 'this run has no terminal for the browser sign-in it needs';
  if (isCi(env)) return 'this run is a CI job (CI is set): nobody is there to sign in';
  return undefined;
}

/** The authorization a failed connection was waiting for, found along the error's causes. */
export function authorizationNeededIn(error: unknown): McpAuthorizationNeeded | undefined {
  for (let depth = 0, current = error; depth < 8 && current instanceof Error; depth++) {
    if (current instanceof McpAuthorizationNeeded) return current;
    current = current.cause;
  }
  return undefined;
}

/** The notice for a server skipped because it needs authorization nobody can give here. */
export function authorizationNeededNotice(server: string, needed: McpAuthorizationNeeded): string {
  return `mcp ${server}: needs authorization, skipped: ${needed.why}. To authorise it, run agent mcp login ${server} where you can sign in in a browser, with the same configuration (its --mcp-config, in this folder): the token is kept for later runs like this one.`;
}

/**
 * `store` with every token it loads or saves redacted like the CLI's own credentials: an HTTP
 * server that echoes the bearer token it was sent (a debug tool, an error quoting the request)
 * handed the user's OAuth token to the model and the session file, because only the servers'
 * configured `env` and `headers` were known secrets, not tokens obtained by signing in.
 */
export function redactedTokenStore(store: McpTokenStore): McpTokenStore {
  const remember = (server: string, auth: McpStoredAuth | undefined) => {
    const values: Record<string, string> = {};
    const { tokens, client } = auth ?? {};
    if (tokens?.access_token !== undefined)
      values[`${server}.oauth access_token`] = tokens.access_token;
    if (tokens?.refresh_token !== undefined)
      values[`${server}.oauth refresh_token`] = tokens.refresh_token;
    if (tokens?.id_token !== undefined) values[`${server}.oauth id_token`] = tokens.id_token;
    if (client !== undefined && 'client_secret' in client && client.client_secret !== undefined)
      values[`${server}.oauth client_secret`] = client.client_secret;
    redactAlso(values);
  };
  return {
    load: async (server) => {
      const auth = await store.load(server);
      remember(server, auth);
      return auth;
    },
    save: async (server, auth) => {
      remember(server, auth);
      await store.save(server, auth);
    },
  };
}
