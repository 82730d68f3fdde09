/**
 * The credentials the user gave for a server — `headers` of an HTTP server (an API key, a
 * `Bearer …`), a key in its URL's query or userinfo, and `env` values of a stdio server (a
 * `GITHUB_TOKEN`) — never come back to the model. A server may echo them (an error quoting the
 * request, a debug tool printing its environment), and what the model reads can be steered to
 * other tools; so tool and resource results, and call errors, have each replaced by
 * `[redacted:<what>]` (core's `secretHider`). Host variables given by `passEnv` count too; the
 * rest of the host's environment is not the server's (see stdio-transport.ts). Secrets the client
 * obtains while connected — OAuth access, refresh and ID tokens, a registered client's secret —
 * are hidden the same way from the moment the client holds them (`LearnedSecrets`).
 */
import {
  isCredentialHeader,
  isCredentialVariable,
  type SentSecret,
  secretHider,
} from '@agent/core';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { McpTransportConfig } from './mcp-options.js';
import { basicCredentials } from './mcp-transport.js';

/** The credential values of a transport's configuration, labelled. */
export function configuredSecrets(transport: McpTransportConfig): SentSecret[] {
  const secrets: SentSecret[] = [];
  const add = (name: string, value: string, label: string, header = false) => {
    if (!(header ? isCredentialHeader(name, value) : isCredentialVariable(name, value))) return;
    secrets.push({ value, label });
    // `Bearer <token>`: the token alone is what a server quotes.
    const scheme = /^(?:Bearer|Basic|Token)\s+(\S+)$/i.exec(value.trim());
    if (scheme?.[1] !== undefined) secrets.push({ value: scheme[1], label });
  };
  if (transport.type === 'http') {
    for (const [name, value] of Object.entries(transport.headers ?? {}))
      add(name, value, `header ${name}`, true);
    let url: URL | undefined;
    try {
      url = new URL(String(transport.url));
    } catch {
      url = undefined;
    }
    for (const [name, value] of url?.searchParams ?? []) add(name, value, `query ${name}`);
    if (url !== undefined && url.password !== '') {
      const password = decodeURIComponent(url.password);
      secrets.push({ value: password, label: 'URL password' });
      // They go as Basic authorization (mcp-transport.ts): a server may echo that header.
      const basic = basicCredentials(`${decodeURIComponent(url.username)}:${password}`);
      secrets.push({ value: basic, label: 'URL password' });
    }
    // Given for the OAuth client: secrets whatever their names say.
    const { oauth } = transport;
    for (const [value, label] of [
      [oauth?.clientSecret, 'OAuth client secret'],
      [oauth?.clientCredentials?.clientSecret, 'OAuth client secret'],
      [oauth?.clientCredentials?.privateKeyPem, 'OAuth private key'],
    ] as const)
      if (value !== undefined && value !== '') secrets.push({ value, label });
  } else if (transport.type === 'stdio') {
    for (const [name, value] of Object.entries(transport.env ?? {}))
      add(name, value, `env ${name}`);
    // Host variables handed to the server by name (read where there is a process: Node).
    const host = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
      ?.env;
    for (const name of transport.passEnv ?? []) {
      const value = host?.[name];
      if (value !== undefined) add(name, value, `env ${name}`);
    }
  }
  return secrets;
}

/** Learned secrets kept at most (oldest forgotten first): a token refreshed hourly for weeks. */
const maxLearned = 256;

/**
 * The configuration's credentials plus those the client obtains while connected; `hide` replaces
 * every one of them, as known at the moment it is called.
 */
export class LearnedSecrets {
  readonly #configured: readonly SentSecret[];
  /** value → label, in the order learned. */
  readonly #learned = new Map<string, string>();
  #hider: ((text: string) => string) | undefined;

  constructor(configured: readonly SentSecret[]) {
    this.#configured = configured;
  }

  /** Remembers a secret the client now holds (nothing for an empty or already known one). */
  learn(value: unknown, label: string): void {
    if (typeof value !== 'string' || value === '' || this.#learned.has(value)) return;
    this.#learned.set(value, label);
    if (this.#learned.size > maxLearned) {
      const [oldest] = this.#learned.keys();
      if (oldest !== undefined) this.#learned.delete(oldest);
    }
    this.#hider = undefined;
  }

  /** Replaces every configured and learned secret in `text`. */
  readonly hide = (text: string): string => {
    this.#hider ??= secretHider([
      ...this.#configured,
      ...[...this.#learned].map(([value, label]) => ({ value, label })),
    ]);
    return this.#hider(text);
  };
}

/** Learns the secrets of an OAuth token response or of a registered client's information. */
function learnFrom(value: unknown, learn: LearnedSecrets['learn']): void {
  if (typeof value !== 'object' || value === null) return;
  const record = value as Record<string, unknown>;
  learn(record.access_token, 'OAuth access token');
  learn(record.refresh_token, 'OAuth refresh token');
  learn(record.id_token, 'OAuth ID token');
  learn(record.client_secret, 'OAuth client secret');
}

const learnedMethods = new Set([
  'tokens',
  'saveTokens',
  'clientInformation',
  'saveClientInformation',
]);

/**
 * `provider` as the SDK sees it, except that every token or client secret it hands out or is
 * given passes through `secrets` first: the SDK asks `tokens()` before each request, so a token
 * is known before any answer that could echo it. Other members are the provider's own (bound to
 * it: its private fields need the real object).
 */
export function learningProvider(
  provider: OAuthClientProvider,
  secrets: LearnedSecrets,
): OAuthClientProvider {
  const learn = secrets.learn.bind(secrets);
  return new Proxy(provider, {
    get(target, property) {
      const member: unknown = Reflect.get(target, property, target);
      if (typeof member !== 'function') return member;
      const bound = (member as (...args: unknown[]) => unknown).bind(target);
      if (typeof property !== 'string' || !learnedMethods.has(property)) return bound;
      return (...args: unknown[]) => {
        for (const argument of args) learnFrom(argument, learn);
        const result = bound(...args);
        if (result instanceof Promise)
          return result.then((value: unknown) => {
            learnFrom(value, learn);
            return value;
          });
        learnFrom(result, learn);
        return result;
      };
    },
  });
}

/**
 * `error` with every secret replaced in its message, stack and its causes' (a connection error
 * quoting the server's answer, which may echo the Authorization header or the URL's key). Done in
 * place, so that what callers look for along the causes — the error classes, `code`s — stays.
 */
export function hideSecretsInAnyError(error: unknown, hide: (text: string) => string): Error {
  const original = error instanceof Error ? error : new Error(String(error));
  const seen = new Set<Error>();
  for (let item: unknown = original; item instanceof Error && !seen.has(item); item = item.cause) {
    seen.add(item);
    try {
      item.message = hide(item.message);
      if (typeof item.stack === 'string') item.stack = hide(item.stack);
    } catch {
      // A frozen error: left as it is (nothing of ours makes one).
    }
  }
  return original;
}

/**
 * `value` (JSON: a tool's definition or schema as listed) with every secret replaced in its
 * strings; the same value when none is there or it cannot be written as JSON (a schema too deep,
 * refused later by the listing's own checks).
 */
export function hideSecretsInJson<T>(value: T, hide: (text: string) => string): T {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    return value;
  }
  if (text === undefined) return value;
  const hidden = hide(text);
  if (hidden === text) return value;
  try {
    return JSON.parse(hidden) as T;
  } catch {
    // A marker that broke the JSON (a label with a quote): string by string instead.
    return hideInStrings(value, hide) as T;
  }
}

function hideInStrings(value: unknown, hide: (text: string) => string): unknown {
  if (typeof value === 'string') return hide(value);
  if (Array.isArray(value)) return value.map((item) => hideInStrings(item, hide));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [hide(key), hideInStrings(item, hide)]),
  );
}
