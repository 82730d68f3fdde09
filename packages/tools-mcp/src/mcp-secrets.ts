/**
 * The credentials the user gave for a server — `headers` of an HTTP server (an API key, a
 * `Bearer …`), a key in its URL's query or userinfo, and `env` values of a stdio server (a
 * `GITHUB_TOKEN`) — never come back to the model. A server may echo them (an error quoting the
 * request, a debug tool printing its environment), and what the model reads can be steered to
 * other tools; so tool and resource results, and call errors, have each replaced by
 * `[redacted:<what>]` (core's `secretHider`). Host variables given by `passEnv` count too; the
 * rest of the host's environment is not the server's (see stdio-transport.ts).
 */
import { isCredentialVariable, type SentSecret, secretHider } from '@agent/core';
import type { McpTransportConfig } from './mcp-options.js';
import { basicCredentials } from './mcp-transport.js';

/** The credential values of a transport's configuration, labelled. */
export function configuredSecrets(transport: McpTransportConfig): SentSecret[] {
  const secrets: SentSecret[] = [];
  const add = (name: string, value: string, label: string) => {
    if (!isCredentialVariable(name, value)) return;
    secrets.push({ value, label });
    // `Bearer <token>`: the token alone is what a server quotes.
    const scheme = /^(?:Bearer|Basic|Token)\s+(\S+)$/i.exec(value.trim());
    if (scheme?.[1] !== undefined) secrets.push({ value: scheme[1], label });
  };
  if (transport.type === 'http') {
    for (const [name, value] of Object.entries(transport.headers ?? {}))
      add(name, value, `header ${name}`);
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

/** A function that hides a configuration's credentials in a text (the identity when none). */
export function configuredSecretHider(transport: McpTransportConfig): (text: string) => string {
  return secretHider(configuredSecrets(transport));
}
