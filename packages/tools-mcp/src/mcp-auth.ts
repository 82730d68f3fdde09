// The adapter's side of authorization: its own OAuth client, step-up on 403, and URL elicitation.
import { AgentError, errorMessage } from '@agent/core';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { McpCaller } from './client-features.js';
import type { McpHttpTransportConfig, McpToolAdapterOptions } from './mcp-options.js';
import { type LearnedSecrets, learningProvider } from './mcp-secrets.js';
import type { HttpTransportAuth } from './mcp-transport.js';
import type { LoopbackOAuthProvider } from './oauth.js';
import { guardOAuthEndpoints } from './oauth-endpoint-guard.js';

/** What `McpAuth` needs from its adapter. */
export interface McpAuthOptions {
  /** The server's name, for messages. */
  readonly server: string;
  /** Shows the URL of a `URL elicitation required` error to the user. */
  readonly elicitation: McpToolAdapterOptions['elicitation'];
  /** Aborted when the adapter closes: stops waiting for the browser. */
  readonly closeSignal: AbortSignal;
  /** Learns the tokens and client secrets the auth provider hands out, to hide their echoes. */
  readonly secrets: LearnedSecrets;
}

/**
 * Authorization for one server: the adapter's own OAuth client (`transport.oauth`) or client
 * credentials, the fetch that notices a step-up (403 insufficient_scope), trading the code the
 * browser brings back, and URL elicitations (-32042) before a call is repeated.
 */
export class McpAuth implements HttpTransportAuth {
  readonly #options: McpAuthOptions;
  /** The adapter's own OAuth client (`transport.oauth`), once started. */
  #oauth: LoopbackOAuthProvider | undefined;
  #clientCredentials: OAuthClientProvider | undefined;
  /** The latest HTTP transport using it: the one that meets a 401 and trades the code. */
  #authTransport: StreamableHTTPClientTransport | undefined;

  constructor(options: McpAuthOptions) {
    this.#options = options;
  }

  /** The server asked for authorization (a 401, or a wider scope) and the user has yet to give it. */
  get awaitingAuthorization(): boolean {
    return this.#oauth?.awaitingAuthorization === true;
  }

  /** The auth provider and fetch for an HTTP transport of this configuration. */
  async forHttp(config: McpHttpTransportConfig): Promise<{
    authProvider: OAuthClientProvider | undefined;
    fetch: FetchLike | undefined;
  }> {
    let authProvider = config.authProvider;
    if (config.oauth?.clientCredentials !== undefined) {
      const { clientCredentialsProvider } = await import('./oauth.js');
      this.#clientCredentials ??= await clientCredentialsProvider(config.oauth.clientCredentials);
      authProvider = this.#clientCredentials;
    } else if (config.oauth !== undefined) {
      // Loaded on demand: it starts a loopback listener (Node only).
      const { LoopbackOAuthProvider } = await import('./oauth.js');
      this.#oauth ??= await LoopbackOAuthProvider.start(
        this.#options.server,
        config.oauth,
        new URL(String(config.url)).href,
      );
      authProvider = this.#oauth;
    }
    if (authProvider !== undefined)
      authProvider = learningProvider(authProvider, this.#options.secrets);
    const fetch =
      this.#oauth === undefined
        ? config.fetch
        : this.#stepUpFetch(
            guardOAuthEndpoints(config.fetch ?? ((url, init) => globalThis.fetch(url, init)), {
              server: this.#options.server,
              serverUrl: new URL(String(config.url)),
            }),
          );
    return { authProvider, fetch };
  }

  /** Remembers the Streamable HTTP transport of the adapter's own OAuth client. */
  usedBy(transport: StreamableHTTPClientTransport): void {
    if (this.#oauth !== undefined) this.#authTransport = transport;
  }

  /** Waits for the browser to come back with a code, then trades it for tokens. */
  async authorize(cause: unknown): Promise<void> {
    const provider = this.#oauth;
    if (provider === undefined) throw cause;
    let code: string;
    try {
      code = await provider.waitForCode(this.#options.closeSignal);
    } catch (error) {
      throw new AgentError(`MCP server "${this.#options.server}": ${errorMessage(error)}`, {
        cause: error,
      });
    }
    // The transport that met the 401 knows where the server's metadata is and which scope it
    // asked for; it trades the code (closed or not: the exchange needs no session).
    const transport = this.#authTransport;
    if (transport === undefined) throw cause;
    await transport.finishAuth(code);
  }

  /**
   * For a `URL elicitation required` error (-32042): asks the elicitation handler for each URL;
   * true when the user accepted all of them (the call is worth repeating).
   */
  async answerUrlElicitation(
    error: unknown,
    signal: AbortSignal,
    caller: McpCaller,
  ): Promise<boolean> {
    const handler = this.#options.elicitation;
    if (handler === undefined || !(error instanceof McpError) || error.code !== -32042)
      return false;
    const data = error.data as { elicitations?: unknown } | undefined;
    const elicitations = Array.isArray(data?.elicitations) ? data.elicitations : [];
    if (elicitations.length === 0) return false;
    for (const params of elicitations) {
      const answer = await handler(params as Parameters<typeof handler>[0], {
        server: this.#options.server,
        signal,
        callers: [caller],
      });
      if (answer.action !== 'accept') return false;
    }
    return true;
  }

  /** Stops the OAuth client's loopback listener, if one was started. */
  async close(): Promise<void> {
    await this.#oauth?.close();
  }

  /** A fetch that tells the OAuth provider when the server asks for a wider scope (403). */
  #stepUpFetch(base: FetchLike | undefined): FetchLike {
    const inner: FetchLike = base ?? ((url, init) => fetch(url, init));
    return async (url, init) => {
      const response = await inner(url, init);
      if (
        response.status === 403 &&
        /insufficient_scope/.test(response.headers.get('www-authenticate') ?? '')
      ) {
        this.#oauth?.stepUp();
      }
      return response;
    };
  }
}
