// Where an operation is called and which origins may receive credentials: the document's servers
// (their variables filled and checked), or the `baseUrl` option, as absolute http(s) URLs.
import { originOf } from './credential-scope.js';
import type { NormalizedServer } from './normalized-types.js';
import type { OpenApiToolOptions } from './openapi-tool-adapter.js';
import { ownEntry } from './own-property.js';

/** The options the base URL depends on. */
type BaseUrlOptions = Pick<
  OpenApiToolOptions,
  'baseUrl' | 'serverVariables' | 'documentUrl' | 'credentialOrigins'
>;

/**
 * The origins that may receive credentials: the document-level servers' (or `baseUrl`'s) and
 * `credentialOrigins`. Servers an operation or path names for itself are not among them.
 */
export function trustedOrigins(
  servers: readonly NormalizedServer[],
  options: BaseUrlOptions,
): Set<string> {
  const origins = new Set<string>();
  const add = (url: string | undefined) => {
    const origin = url === undefined ? undefined : originOf(url);
    if (origin !== undefined) origins.add(origin);
  };
  if (options.baseUrl !== undefined) add(options.baseUrl);
  else
    servers.forEach((server, index) => {
      const url = resolveBaseUrl([server], options).url;
      // Documents list `http://` twins of their `https://` servers (or a plain-http sandbox); an
      // operation or path whose own servers pick such a one would send every credential in clear
      // text. Only the server the API is called on may be `http:` (a local or intranet API).
      if (index === 0 || url === undefined || /^https:/i.test(url)) add(url);
    });
  for (const origin of options.credentialOrigins ?? []) add(origin);
  return origins;
}

/** The absolute base URL of an operation, or why there is none. */
export interface ResolvedBaseUrl {
  url: string | undefined;
  problem: string;
  /** The user name and password the URL held (taken out of `url`). */
  userinfo?: { username: string; password: string };
}

/** The base URL of an operation whose own servers (or the document's) are `servers`. */
export function resolveBaseUrl(
  servers: readonly NormalizedServer[],
  options: BaseUrlOptions,
): ResolvedBaseUrl {
  if (options.baseUrl !== undefined) return webUrl(options.baseUrl);
  const server = servers[0] ?? { url: '/', variables: {} };
  const missing: string[] = [];
  const outside: string[] = [];
  const url = server.url.replace(/\{([^{}]+)\}/g, (match, variable: string) => {
    const declared = ownEntry(server.variables, variable);
    const value = ownEntry(options.serverVariables, variable) ?? declared?.default;
    if (value === undefined) missing.push(variable);
    const allowed = declared?.enum;
    if (
      value !== undefined &&
      allowed !== undefined &&
      allowed.length > 0 &&
      !allowed.includes(value)
    )
      outside.push(
        `${variable}=${JSON.stringify(value)} (one of ${allowed.map((item) => JSON.stringify(item)).join(', ')})`,
      );
    return value ?? match;
  });
  if (outside.length > 0)
    return {
      url: undefined,
      problem: `The server URL "${server.url}" only allows listed values: ${outside.join('; ')}.`,
    };
  if (missing.length > 0)
    return {
      url: undefined,
      problem: `The server URL "${server.url}" has variables without a value (${missing.join(', ')}); pass serverVariables or baseUrl.`,
    };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return webUrl(url);
  if (options.documentUrl !== undefined && /^https?:/i.test(options.documentUrl)) {
    return webUrl(new URL(url, options.documentUrl).href);
  }
  return {
    url: undefined,
    problem: `The document's server URL "${url}" is relative and the document was not loaded from a URL; pass the baseUrl option.`,
  };
}

/**
 * An absolute base URL as requests use it: http or https only (fetch would fail later with
 * "unknown scheme" or "not implemented"), and without a user name and password, which fetch
 * refuses — its error quoted the password to the model. They are sent as Basic authorization.
 */
function webUrl(url: string): ResolvedBaseUrl {
  if (!/^https?:\/\//i.test(url))
    return {
      url: undefined,
      problem: `The server URL "${url}" is not an http or https URL; pass the baseUrl option.`,
    };
  const userinfo = /^(https?:\/\/)([^/?#]*)@/i.exec(url);
  if (userinfo === null) return { url, problem: '' };
  const [username = '', password = ''] = (userinfo[2] ?? '').split(/:(.*)/s);
  return {
    url: `${userinfo[1]}${url.slice(userinfo[0].length)}`,
    problem: '',
    userinfo: { username: safeDecode(username), password: safeDecode(password) },
  };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
