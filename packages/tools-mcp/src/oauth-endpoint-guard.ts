// What the adapter's own OAuth client refuses of the endpoints a server's metadata names: OAuth 2.1
// (§1.5) and the MCP authorization spec require TLS for every authorization server endpoint, and
// the MCP spec has a client refuse an authorization server that does not advertise PKCE. The SDK's
// auth() checks neither: a token endpoint on plain http received the code, its PKCE verifier and
// the client secret in clear, and an authorization server that never mentions S256 was used.
import { AgentError } from '@agent/core';
import { foreignListener, loopbackPort } from '@agent/core/loopback';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** Authorization server metadata larger than this is refused (a real one is a few kB). */
const maximumMetadataBytes = 1024 * 1024;

/**
 * Why an OAuth endpoint at `target` must not be used, or undefined: plain http is refused unless
 * it stays on this machine or goes to the MCP server's own host (whose URL the user gave as http).
 */
function cleartextProblem(target: URL, serverUrl: URL): string | undefined {
  // Other schemes are not sent anywhere: fetch refuses them, and an authorization URL that is not
  // a web address is refused before it is opened (LoopbackOAuthProvider).
  if (target.protocol !== 'http:') return undefined;
  // Plain http to this machine itself stays on it (loopbackPort: every spelling that reaches it).
  if (loopbackPort(target) !== undefined) return undefined;
  if (serverUrl.protocol === 'http:' && target.hostname === serverUrl.hostname) return undefined;
  return 'is plain http to another host: OAuth requires https there (codes, verifiers, secrets and tokens would cross the network in clear)';
}

function isAuthorizationServerMetadata(url: URL): boolean {
  return (
    url.pathname.startsWith('/.well-known/oauth-authorization-server') ||
    url.pathname.includes('/.well-known/openid-configuration')
  );
}

async function boundedText(response: Response, url: URL, server: string): Promise<string> {
  if (response.body === null) return '';
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maximumMetadataBytes)
      throw new AgentError(
        `MCP server "${server}": the authorization server metadata at ${url.href} is over ${maximumMetadataBytes} bytes; refused`,
      );
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}

/** Throws naming the endpoint when authorization server metadata names an endpoint or PKCE it must not. */
function checkMetadata(metadata: unknown, url: URL, serverUrl: URL, server: string): void {
  if (metadata === null || typeof metadata !== 'object') return; // the SDK refuses it by its schema
  const fields = metadata as Record<string, unknown>;
  for (const key of [
    'issuer',
    'authorization_endpoint',
    'token_endpoint',
    'registration_endpoint',
    'revocation_endpoint',
  ]) {
    const value = fields[key];
    if (typeof value !== 'string') continue;
    let endpoint: URL;
    try {
      endpoint = new URL(value);
    } catch {
      continue; // the SDK refuses a malformed URL by its schema
    }
    const problem = cleartextProblem(endpoint, serverUrl);
    if (problem !== undefined)
      throw new AgentError(
        `MCP server "${server}": the authorization server's ${key} ${endpoint.href} ${problem}; refused`,
      );
  }
  const methods = fields.code_challenge_methods_supported;
  if (!Array.isArray(methods) || !methods.includes('S256'))
    throw new AgentError(
      `MCP server "${server}": the authorization server (${url.origin}) does not advertise PKCE with S256 (code_challenge_methods_supported: ${JSON.stringify(methods ?? null)}); refused, as the MCP authorization spec asks`,
    );
}

/**
 * A fetch for a server that the adapter authorises itself: no request leaves over plain http for
 * another host than the MCP server's own (unless on loopback), none goes to a loopback port that a
 * process of another user holds (Linux: `@agent/core/loopback`), and authorization server metadata
 * is refused when one of its endpoints would, or when it does not advertise PKCE with S256. A
 * refusal is an `AgentError` naming the URL; the connection fails with it.
 */
export function guardOAuthEndpoints(
  inner: FetchLike,
  options: { server: string; serverUrl: URL },
): FetchLike {
  const { server, serverUrl } = options;
  return async (url, init) => {
    const target = new URL(String(url));
    const problem = cleartextProblem(target, serverUrl);
    if (problem !== undefined)
      throw new AgentError(
        `MCP server "${server}": the authorization endpoint ${target.origin}${target.pathname} ${problem}; refused`,
      );
    // "Stays on this machine" is not "stays with this user": an authorization server on a
    // loopback port (a local Keycloak, the MCP server's own on another port) that is not running
    // can be replaced by another user's process, which the refresh token, the client secret and a
    // code with its verifier would then reach.
    const port = loopbackPort(target);
    const stranger = port === undefined ? undefined : foreignListener(port);
    if (stranger !== undefined)
      throw new AgentError(
        `MCP server "${server}": the process listening on ${target.host} (${target.origin}${target.pathname}) belongs to another user of this machine (uid ${stranger}), not to you; nothing was sent to it`,
      );
    const response = await inner(url, init);
    if (!response.ok || !isAuthorizationServerMetadata(target)) return response;
    const text = await boundedText(response, target, server);
    let metadata: unknown;
    try {
      metadata = JSON.parse(text);
    } catch {
      metadata = undefined; // the SDK reports the body it cannot parse
    }
    checkMetadata(metadata, target, serverUrl, server);
    return new Response(text, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
