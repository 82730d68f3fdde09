import { AgentError } from '@agent/core';
import { httpTokenProblem, isHttpToken } from './http-names.js';
import type { NormalizedOperation, NormalizedSecurityScheme } from './normalized-types.js';
import { ownEntry } from './own-property.js';
import { specError } from './spec-error.js';

/** A secret given directly or produced per request (e.g. a token that is refreshed). */
export type SecretSource = string | (() => string | Promise<string>);

/**
 * Credentials sent with every request (except operations that declare `security: []`):
 * - `bearer`: `Authorization: Bearer <token>` (HTTP bearer, OAuth 2, OpenID Connect).
 * - `basic`: `Authorization: Basic …` from a user name and password.
 * - `apiKey`: placed where the document's apiKey security scheme says (header, query or cookie);
 *   pick the scheme by name with `scheme`, or give `in` and `name` yourself. A key tied to a
 *   scheme is only sent to operations whose security requirements mention that scheme.
 */
export type OpenApiAuth =
  | { type: 'bearer'; token: SecretSource }
  | { type: 'basic'; username: string; password: SecretSource }
  | {
      type: 'apiKey';
      value: SecretSource;
      /** Name of the security scheme in the document [the first apiKey scheme]. */
      scheme?: string;
      /** Where the key goes, when the document declares no apiKey scheme (or to override it). */
      in?: 'header' | 'query' | 'cookie';
      /** Header, query parameter or cookie name, with `in`. */
      name?: string;
    };

/** A credential with its place fixed. */
export type ResolvedAuth =
  | { type: 'bearer'; token: SecretSource }
  | { type: 'basic'; username: string; password: SecretSource }
  | {
      type: 'apiKey';
      value: SecretSource;
      in: 'header' | 'query' | 'cookie';
      name: string;
      scheme: string | undefined;
    };

/** Fixes where each credential goes; throws when an apiKey has no place. */
export function resolveAuth(
  auth: OpenApiAuth | readonly OpenApiAuth[] | undefined,
  schemes: Record<string, NormalizedSecurityScheme>,
): ResolvedAuth[] {
  const list: readonly OpenApiAuth[] =
    auth === undefined ? [] : Array.isArray(auth) ? auth : [auth as OpenApiAuth];
  return list.map((item): ResolvedAuth => {
    if (item.type !== 'apiKey') return item;
    const named = item.scheme === undefined ? undefined : ownEntry(schemes, item.scheme);
    if (item.scheme !== undefined && named?.type !== 'apiKey')
      throw new AgentError(
        `auth: the document has no apiKey security scheme named "${item.scheme}" (apiKey schemes: ${apiKeySchemeNames(schemes).join(', ') || 'none'})`,
      );
    const [firstName] = apiKeySchemeNames(schemes);
    const schemeName = item.scheme ?? (item.in === undefined ? firstName : undefined);
    const scheme = schemeName === undefined ? undefined : ownEntry(schemes, schemeName);
    const location = item.in ?? (scheme?.type === 'apiKey' ? scheme.in : undefined);
    const name = item.name ?? (scheme?.type === 'apiKey' ? scheme.name : undefined);
    if (location === undefined || name === undefined)
      throw new AgentError(
        'auth: an apiKey needs "in" and "name" because the document declares no apiKey security scheme',
      );
    if (location !== 'query' && !isHttpToken(name)) {
      if (item.name === undefined && scheme?.type === 'apiKey')
        specError(
          scheme.pointer,
          `the apiKey security scheme "${schemeName}" names its ${location} ${httpTokenProblem(name)}; give the key's "in" and "name" in the auth option to send it another way`,
        );
      throw new AgentError(`auth: the apiKey's ${location} name ${httpTokenProblem(name)}`);
    }
    return { type: 'apiKey', value: item.value, in: location, name, scheme: schemeName };
  });
}

function apiKeySchemeNames(schemes: Record<string, NormalizedSecurityScheme>): string[] {
  return Object.entries(schemes)
    .filter(([, scheme]) => scheme.type === 'apiKey')
    .map(([name]) => name);
}

/** The credentials that apply to an operation (none when it declares `security: []`). */
export function authFor(
  operation: NormalizedOperation,
  auth: readonly ResolvedAuth[],
): ResolvedAuth[] {
  const security = operation.security;
  if (security !== undefined && security.length === 0) return [];
  return auth.filter((item) => {
    if (item.type !== 'apiKey' || item.scheme === undefined || security === undefined) return true;
    return security.some((requirement) => Object.hasOwn(requirement, item.scheme as string));
  });
}

/** The value of a secret now. */
export async function readSecret(source: SecretSource): Promise<string> {
  return typeof source === 'string' ? source : await source();
}

/** `Basic base64(user:password)`, UTF-8 safe. */
export function basicCredentials(username: string, password: string): string {
  const bytes = new TextEncoder().encode(`${username}:${password}`);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}
