/**
 * OAuth for HTTP servers, done by the adapter itself: authorization code + PKCE with a loopback
 * redirect listener on 127.0.0.1, dynamic client registration or a pre-registered client (or a
 * client ID metadata document), metadata discovery, scope selection and step-up, and token
 * refresh — the SDK's `auth()` does the protocol; this provider answers its questions, catches
 * the redirect and keeps the tokens in a store. The application only says how to show the
 * authorization URL (`openUrl`). Tokens never reach the model or a log line.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fromThisUser } from '@agent/core/loopback';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { type McpStoredAuth, type McpTokenStore, memoryTokenStore } from './token-store.js';

/**
 * Machine-to-machine: the client credentials grant, with a client secret or a private key
 * (`private_key_jwt`), no user and no browser (the SDK's providers).
 */
export interface McpClientCredentials {
  clientId: string;
  /** With a secret: `client_secret_basic`. */
  clientSecret?: string;
  /** With a private key (PEM, PKCS#8): a signed JWT assertion. */
  privateKeyPem?: string;
  /** The key's algorithm [RS256]. */
  algorithm?: string;
  scope?: string;
}

/** `transport: { type: 'http', oauth }`: how the adapter authorises itself. */
export interface McpOAuthOptions {
  /**
   * Shows the authorization URL to the user — print it, open a browser. The adapter waits for
   * the browser to come back to its loopback listener with the code. Not used with
   * `clientCredentials`. Only an http or https URL reaches it: the authorization server's
   * metadata names the URL, and another scheme (`file:`, `smb:`, an app's) fails the connection.
   * An `openUrl` that throws (or rejects) — e.g. because nobody is there to sign in — fails the
   * connection at once with that error as its cause, instead of waiting for the browser.
   */
  openUrl?: (url: URL) => void | Promise<void>;
  /** Use the client credentials grant instead of a user's authorization. */
  clientCredentials?: McpClientCredentials;
  /** Scopes to ask for [what the server's metadata or its 401 says]. */
  scope?: string;
  /** A pre-registered client (no dynamic registration then). */
  clientId?: string;
  clientSecret?: string;
  /** A client ID metadata document URL (used as the client ID where the server supports it). */
  clientMetadataUrl?: string;
  /** The client's name in a dynamic registration [@agent/tools-mcp]. */
  clientName?: string;
  /** Where tokens and registrations are kept [memory]. */
  store?: McpTokenStore;
  /** Port of the loopback redirect listener [0: any free port]. */
  callbackPort?: number;
  /** How long to wait for the user to authorise, in ms [300000]. */
  timeoutMs?: number;
}

interface Pending {
  state: string;
  /** The browser has come back (with a code or an error); a second visit is refused. */
  answered: boolean;
  resolve: (code: string) => void;
  reject: (error: Error) => void;
  promise: Promise<string>;
}

/** An `OAuthClientProvider` with a loopback redirect listener, for one server. */
export class LoopbackOAuthProvider implements OAuthClientProvider {
  readonly #server: string;
  readonly #options: McpOAuthOptions;
  readonly #store: McpTokenStore;
  readonly #port: number;
  /**
   * The loopback redirect listener: open only while an authorization waits for the browser —
   * from just before its URL is shown until the redirect came back, it failed, timed out or was
   * replaced — not for the whole session of every OAuth server (which most never need).
   */
  #listener: Server | undefined;
  readonly #redirectUrl: string;
  #stored: McpStoredAuth = {};
  /** The MCP server URL tokens are obtained for, when the caller named it. */
  #resource: string | undefined;
  #verifier = '';
  #pending: Pending | undefined;
  #steppingUp = false;
  readonly clientMetadataUrl?: string;

  private constructor(server: string, options: McpOAuthOptions, port: number) {
    this.#server = server;
    this.#options = options;
    this.#store = options.store ?? memoryTokenStore();
    this.#port = port;
    this.#redirectUrl = `http://127.0.0.1:${port}/callback`;
    if (options.clientMetadataUrl !== undefined) this.clientMetadataUrl = options.clientMetadataUrl;
  }

  /** Opens the redirect listener on the redirect URL's port (once: it may be open already). */
  async #listen(): Promise<void> {
    if (this.#listener !== undefined) return;
    const listener = createServer((request, response) => this.#answer(request, response));
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(this.#port, '127.0.0.1', () => resolve());
    });
    listener.unref();
    this.#listener = listener;
  }

  /** Closes the redirect listener: no new connection; an idle kept-alive one is ended too. */
  #closeListener(): void {
    const listener = this.#listener;
    this.#listener = undefined;
    if (listener === undefined) return;
    listener.close();
    listener.closeIdleConnections();
  }

  /** The browser's redirect (or anything else reaching the listener). */
  #answer(request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? '/', this.#redirectUrl);
    const pending = this.#pending;
    if (url.pathname !== '/callback' || pending === undefined || pending.answered) {
      response.writeHead(404).end();
      return;
    }
    const error = url.searchParams.get('error');
    const code = url.searchParams.get('code');
    const state = url.searchParams.get('state');
    // Only the redirect of this authorization (its state, RFC 6749 §4.1.2 and §4.1.2.1 for
    // errors too) answers it: any local process or web page can reach this port, and a stray
    // code or error must neither complete nor end the authorization in progress.
    if (state !== pending.state) {
      response.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' });
      response.end('This does not answer the authorization in progress.');
      return;
    }
    // The state is no secret from the other users of the machine: the authorization URL is on
    // the browser's command line, which any of them can read. One of them who signs in with it
    // as themselves would hand this client a code of their own account (login CSRF: the user's
    // agent then works in the other user's account). Only a browser of this user (or root's)
    // may answer, on Linux, where the kernel says whose the connection is.
    if (!fromThisUser(request.socket)) {
      response.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
      response.end('This authorization belongs to another user of this machine.');
      return;
    }
    // Kept until waitForCode takes it: the browser may come back before the adapter asks
    // (an openUrl that resolves only once the redirect is done).
    pending.answered = true;
    response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    if (error !== null) {
      response.end('Authorization failed; you can close this window.');
      pending.reject(
        new Error(
          `authorization was refused: ${error}${url.searchParams.has('error_description') ? ` (${url.searchParams.get('error_description')})` : ''}`,
        ),
      );
    } else if (code === null) {
      response.end('This does not answer the authorization in progress.');
      pending.reject(new Error('the authorization redirect had no code'));
    } else {
      response.end('Authorized; you can close this window and return to the application.');
      pending.resolve(code);
    }
  }

  /**
   * Picks the redirect listener's port and loads what the store keeps for this server. With `resource`
   * (the MCP server's URL), kept tokens are used only when they were obtained for that URL: the
   * store is keyed by name, and a name that now points elsewhere must not be handed the user's
   * token (a new sign-in is asked instead).
   */
  static async start(
    server: string,
    options: McpOAuthOptions,
    resource?: string,
  ): Promise<LoopbackOAuthProvider> {
    // The redirect URL (registered with the client) needs its port now; the listener opens only
    // when an authorization is under way.
    const port = options.callbackPort ?? (await freeLoopbackPort());
    const provider = new LoopbackOAuthProvider(server, options, port);
    const stored = (await provider.#store.load(server)) ?? {};
    provider.#resource = resource;
    provider.#stored =
      resource === undefined || stored.resource === resource || stored.tokens === undefined
        ? stored
        : {
            // Tokens of another URL (or of an entry that never said which): not this server's.
            ...(stored.client === undefined ? {} : { client: stored.client }),
          };
    return provider;
  }

  get redirectUrl(): string {
    return this.#redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.#options.clientName ?? '@agent/tools-mcp',
      redirect_uris: [this.#redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method:
        this.#options.clientSecret === undefined ? 'none' : 'client_secret_basic',
      ...(this.#options.scope === undefined ? {} : { scope: this.#options.scope }),
    };
  }

  state(): string {
    return randomBytes(16).toString('hex');
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    if (this.#options.clientId !== undefined) {
      return {
        client_id: this.#options.clientId,
        ...(this.#options.clientSecret === undefined
          ? {}
          : { client_secret: this.#options.clientSecret }),
      };
    }
    return this.#stored.client;
  }

  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    this.#stored = { ...this.#stored, client };
    await this.#store.save(this.#server, this.#stored);
  }

  tokens(): OAuthTokens | undefined {
    const tokens = this.#stored.tokens;
    if (!this.#steppingUp || tokens === undefined) return tokens;
    // A refresh cannot widen the grant: without the refresh token, the SDK's auth() asks the
    // user to authorise the wider scope instead of refreshing into the same 403.
    const { refresh_token: _dropped, ...rest } = tokens;
    return rest;
  }

  /**
   * The server answered 403 insufficient_scope: until new tokens are saved, the next
   * authorization is a new grant from the user, not a refresh.
   */
  stepUp(): void {
    this.#steppingUp = true;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    this.#steppingUp = false;
    this.#stored = {
      ...this.#stored,
      tokens,
      ...(this.#resource === undefined ? {} : { resource: this.#resource }),
    };
    await this.#store.save(this.#server, this.#stored);
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const state = authorizationUrl.searchParams.get('state') ?? '';
    let resolve: (code: string) => void = () => undefined;
    let reject: (error: Error) => void = () => undefined;
    const promise = new Promise<string>((ok, fail) => {
      resolve = ok;
      reject = fail;
    });
    promise.catch(() => undefined);
    this.#pending?.reject(new Error('a newer authorization replaced this one'));
    const current: Pending = { state, answered: false, resolve, reject, promise };
    this.#pending = current;
    // Once this authorization is over (the code came back, it failed, timed out or the adapter
    // closed), nothing more is to come to the listener: it closes, unless a newer one took over.
    const over = () => {
      if (this.#pending === current || this.#pending === undefined) this.#closeListener();
    };
    promise.then(over, over);
    const open = this.#options.openUrl;
    if (authorizationUrl.protocol !== 'http:' && authorizationUrl.protocol !== 'https:') {
      // The URL comes from the authorization server's metadata, which the MCP server names: a
      // file:, smb: or app URL handed to a browser opener runs whatever handles that scheme.
      this.#pending.reject(
        new Error(
          `the authorization server's authorization URL is not a web address (${authorizationUrl.protocol}); it was not opened`,
        ),
      );
      return;
    }
    if (open === undefined) {
      this.#pending.reject(
        new Error('authorization is needed but no openUrl was given to show its URL'),
      );
      return;
    }
    const pending = this.#pending;
    try {
      await this.#listen();
    } catch (error) {
      pending.reject(
        new Error(
          `the sign-in's redirect listener could not open on ${this.#redirectUrl} (${errorText(error)}); nothing was opened, try again`,
        ),
      );
      return;
    }
    try {
      await open(authorizationUrl);
    } catch (error) {
      // Nobody will come back through the browser (an app with no one to sign in says so by
      // throwing): the authorization ends now, with that error, instead of waiting out its timeout.
      pending.reject(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    return this.#verifier;
  }

  async invalidateCredentials(
    scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery',
  ): Promise<void> {
    const { tokens, client, resource } = this.#stored;
    const keepTokens = scope !== 'all' && scope !== 'tokens';
    const keepClient = scope !== 'all' && scope !== 'client';
    this.#stored = {
      ...(keepTokens && tokens !== undefined
        ? { tokens, ...(resource === undefined ? {} : { resource }) }
        : {}),
      ...(keepClient && client !== undefined ? { client } : {}),
    };
    if (scope === 'all' || scope === 'verifier') this.#verifier = '';
    await this.#store.save(this.#server, this.#stored);
  }

  /** Whether an authorization is waiting for the browser to come back. */
  get awaitingAuthorization(): boolean {
    return this.#pending !== undefined;
  }

  /** The code the browser brings back to the loopback listener (or why not, or a timeout). */
  waitForCode(signal?: AbortSignal): Promise<string> {
    const pending = this.#pending;
    if (pending === undefined) return Promise.reject(new Error('no authorization is in progress'));
    const timeoutMs = this.#options.timeoutMs ?? 300_000;
    return new Promise<string>((resolve, reject) => {
      // Timed out, the authorization is over (its listener closes): a later redirect finds none.
      const timer = setTimeout(
        () =>
          pending.reject(new Error(`nobody authorised within ${Math.round(timeoutMs / 1000)} s`)),
        timeoutMs,
      );
      const stop = () => reject(new Error('cancelled'));
      signal?.addEventListener('abort', stop, { once: true });
      const done = () => {
        if (this.#pending === pending) this.#pending = undefined;
      };
      pending.promise.then(
        (code) => {
          done();
          clearTimeout(timer);
          signal?.removeEventListener('abort', stop);
          resolve(code);
        },
        (error: unknown) => {
          done();
          clearTimeout(timer);
          signal?.removeEventListener('abort', stop);
          reject(error);
        },
      );
    });
  }

  /** Ends an authorization in progress and its loopback listener. */
  close(): Promise<void> {
    this.#pending?.reject(new Error('the adapter was closed'));
    this.#pending = undefined;
    const listener = this.#listener;
    this.#closeListener();
    return new Promise((resolve) =>
      listener === undefined ? resolve() : listener.close(() => resolve()),
    );
  }
}

/** A port of 127.0.0.1 free now (the kernel's pick), for a listener opened later. */
async function freeLoopbackPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The SDK's provider for the client credentials grant (secret or private key). */
export async function clientCredentialsProvider(
  credentials: McpClientCredentials,
): Promise<OAuthClientProvider> {
  const { ClientCredentialsProvider, PrivateKeyJwtProvider } = await import(
    '@modelcontextprotocol/sdk/client/auth-extensions.js'
  );
  const scope = credentials.scope === undefined ? {} : { scope: credentials.scope };
  if (credentials.privateKeyPem !== undefined) {
    return new PrivateKeyJwtProvider({
      clientId: credentials.clientId,
      privateKey: credentials.privateKeyPem,
      algorithm: credentials.algorithm ?? 'RS256',
      ...scope,
    });
  }
  if (credentials.clientSecret === undefined)
    throw new Error('clientCredentials needs a clientSecret or a privateKeyPem');
  return new ClientCredentialsProvider({
    clientId: credentials.clientId,
    clientSecret: credentials.clientSecret,
    ...scope,
  });
}
