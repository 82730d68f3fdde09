import { isCredentialVariable } from './credential-environment.js';

/**
 * Request headers that say what a request is or who the client is, never who may make it: not a
 * credential by their name, whatever their value (lower case).
 */
export const descriptiveHeaderNames: readonly string[] = [
  'accept',
  'accept-charset',
  'accept-encoding',
  'accept-language',
  'cache-control',
  'connection',
  'content-encoding',
  'content-language',
  'content-length',
  'content-type',
  'dnt',
  'http-referer',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'mcp-protocol-version',
  'origin',
  'pragma',
  'prefer',
  'referer',
  'user-agent',
  'x-client-name',
  'x-client-version',
  'x-request-id',
  'x-requested-with',
  'x-title',
];

const descriptive = new Set(descriptiveHeaderNames);

/**
 * Whether a header the user configured (for an MCP server, an OpenAPI source) carries a
 * credential, so that a server echoing it does not hand it to the model. The name and value rules
 * of environment variables first (`Authorization`, `X-Api-Key`, a `ghp_…` value); then any other
 * header whose value reads as a key — one run of 12 or more key characters mixing letters and
 * digits — unless its name only describes the request (`Accept`, `User-Agent`, `…-Version`).
 * Services name their key headers as they like (`X-Honeycomb-Team`, `X-Goog-User-Project`,
 * `X-Session-Id`): a name that does not say "key" hid nothing before.
 */
export function isCredentialHeader(name: string, value: string): boolean {
  if (isCredentialVariable(name, value)) return true;
  const lower = name.trim().toLowerCase();
  if (descriptive.has(lower) || /-(?:version|beta)$/.test(lower)) return false;
  return readsAsKey(value.trim());
}

/** One run of key characters, 12 or more, with letters and digits: not a word, date, version, MIME type or URL. */
function readsAsKey(value: string): boolean {
  if (!/^[A-Za-z0-9._~+/=:-]{12,}$/.test(value)) return false;
  if (!/[0-9]/.test(value) || !/[A-Za-z]/.test(value)) return false;
  if (/^[a-z]+:\/\//i.test(value)) return false;
  if (/^(?:application|text|image|audio|video|multipart)\/[\w.+-]+$/i.test(value)) return false;
  // A version or a date: v1.2.3, 2024-01-01, 2023-06-01T00:00:00.
  return !/^v?\d+(?:[.:T-]\d+)*Z?$/i.test(value);
}
