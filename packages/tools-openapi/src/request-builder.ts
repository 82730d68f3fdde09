import {
  isCredentialHeader,
  isCredentialVariable,
  type JsonSchema,
  type SentSecret,
  ToolError,
} from '@agent/core';
import { bodyProperty, type ParameterBinding } from './arguments-schema.js';
import { basicCredentials, type ResolvedAuth, readSecret } from './auth.js';
import { encodeReserved, formBody, formFieldPairs, multipartBody } from './body-encoding.js';
import { joinDelimited, joiningDelimiter, UnsendableValueError } from './delimited-values.js';
import { cookieValueProblem, httpTokenProblem, isHttpToken } from './http-names.js';
import { isJsonMediaType } from './media-types.js';
import type { NormalizedOperation, NormalizedParameter } from './normalized-types.js';
import { ownEntry } from './own-property.js';
import { formMediaType } from './read-parameters.js';
import { isRecord } from './spec-reader.js';

/** A request ready for `fetch`, plus a URL safe to show (credentials masked). */
export interface BuiltRequest {
  method: string;
  url: string;
  /** `url` with API keys in the query replaced by `***`. */
  displayUrl: string;
  headers: Headers;
  body: RequestInit['body'];
  /** The credential values the request carries, for hiding them in what comes back. */
  secrets: SentSecret[];
}

/** Everything `buildRequest` needs besides the arguments. */
export interface RequestPlan {
  toolName: string;
  operation: NormalizedOperation;
  bindings: readonly ParameterBinding[];
  /** Schema of the `body` property (to find file fields of a multipart body). */
  bodySchema: JsonSchema | undefined;
  /** Absolute base URL; undefined when none could be found (then `baseUrlProblem` says why). */
  baseUrl: string | undefined;
  baseUrlProblem: string;
  /**
   * The user name and password the server URL held (`https://user:pass@host`): sent as Basic
   * authorization to that URL's own origin, unless an auth option sets Authorization.
   */
  urlCredentials?: { username: string; password: string } | undefined;
  auth: readonly ResolvedAuth[];
  /** Extra headers, applied last (they win). */
  headers: Record<string, string> | undefined;
  /** False when the server is not on one of the API's origins: no auth, no extra headers. */
  sendCredentials: boolean;
}

/** Builds the HTTP request for validated arguments; throws `ToolError` when it cannot. */
export async function buildRequest(
  plan: RequestPlan,
  args: Record<string, unknown>,
): Promise<BuiltRequest> {
  const { operation, toolName } = plan;
  if (plan.baseUrl === undefined) throw new ToolError(plan.baseUrlProblem, { toolName });
  let path = operation.path;
  const query: string[] = [];
  const displayQuery: string[] = [];
  const headers = new Headers();
  const cookies: string[] = [];
  const secrets: SentSecret[] = [];
  // By the name a lenient server reads (queryNameKey), to the name as the API declares it.
  const credentialQuery = new Map(
    plan.sendCredentials
      ? plan.auth.flatMap((item) =>
          item.type === 'apiKey' && item.in === 'query'
            ? [[queryNameKey(item.name), item.name] as const]
            : [],
        )
      : [],
  );

  for (const { property, parameter } of plan.bindings) {
    const value = ownEntry(args, property);
    if (value === undefined || value === null) {
      if (parameter.in === 'path')
        throw ToolError.invalidArguments(
          toolName,
          `at "${property}": the path parameter is required`,
        );
      continue;
    }
    try {
      switch (parameter.in) {
        case 'path': {
          const text = pathValue(parameter, value);
          // An empty segment would call another route (`/items/` for `/items/{id}`) than the one
          // the permission subject names.
          if (text === '' || text === '.' || text === ';' || text === `;${parameter.name}=`)
            throw new UnsendableValueError('the path parameter may not be empty');
          path = path.replaceAll(`{${parameter.name}}`, () => text);
          break;
        }
        case 'query':
        case 'querystring': {
          const pairs =
            parameter.in === 'query'
              ? queryPairs(parameter, value)
              : wholeQueryPairs(parameter, value);
          // An exploded object's keys (or a whole query string) are the model's to choose; one a
          // server reads as the API key's query parameter would send a key the model chose (the
          // server may read the first).
          for (const pair of pairs) {
            const equals = pair.indexOf('=');
            const name = safeDecode(equals === -1 ? pair : pair.slice(0, equals));
            const credential = credentialQuery.get(queryNameKey(name));
            if (credential !== undefined)
              throw new UnsendableValueError(
                name === credential
                  ? `the query parameter "${credential}" carries the API's credential and is filled by the client`
                  : `the query parameter "${name}" reads as "${credential}" to many servers, which carries the API's credential and is filled by the client`,
              );
          }
          query.push(...pairs);
          displayQuery.push(...pairs);
          break;
        }
        case 'header': {
          const text =
            parameter.contentType !== undefined
              ? jsonText(value)
              : simpleValue(value, parameter.explode);
          const problem = headerValueProblem(text);
          if (problem !== undefined) throw new UnsendableValueError(problem);
          headers.set(parameter.name, text);
          break;
        }
        case 'cookie': {
          cookies.push(`${parameter.name}=${cookieValue(parameter, value)}`);
          break;
        }
        default: {
          const exhaustive: never = parameter.in;
          throw new Error(`Unknown parameter location ${String(exhaustive)}`);
        }
      }
    } catch (error) {
      if (error instanceof UnsendableValueError)
        throw ToolError.invalidArguments(toolName, `at "${property}": ${error.message}`);
      // Percent-encoding text with a lone UTF-16 surrogate throws this bare error.
      if (error instanceof URIError)
        throw ToolError.invalidArguments(
          toolName,
          `at "${property}": the value holds a lone UTF-16 surrogate (half of a character), which has no UTF-8 form to send`,
        );
      throw error;
    }
  }
  refuseDotSegments(operation.path, path, toolName);

  // A credential is never quoted in an error: `Headers.set` would name the whole value.
  const setCredential = (name: string, value: string, label: string) => {
    if (!isHttpToken(name))
      throw new ToolError(
        `The ${label} cannot be sent: the header name ${httpTokenProblem(name)}.`,
        {
          toolName,
        },
      );
    const problem = headerValueProblem(value);
    if (problem !== undefined)
      throw new ToolError(`The ${label} cannot be sent in the ${name} header: ${problem}.`, {
        toolName,
      });
    headers.set(name, value);
  };
  for (const item of plan.sendCredentials ? plan.auth : []) {
    if (item.type === 'bearer') {
      const token = await readSecret(item.token);
      secrets.push({ value: token, label: 'bearer token' });
      setCredential('authorization', `Bearer ${token}`, 'bearer token');
    } else if (item.type === 'basic') {
      const password = await readSecret(item.password);
      const credentials = basicCredentials(item.username, password);
      secrets.push(
        { value: password, label: 'basic password' },
        // The header as sent: `Basic base64(user:password)` echoed back decodes to the password.
        { value: credentials.slice('Basic '.length), label: 'basic credentials' },
      );
      headers.set('authorization', credentials);
    } else {
      const value = await readSecret(item.value);
      secrets.push({ value, label: `api key ${item.name}` });
      if (item.in === 'header') setCredential(item.name, value, `API key ${item.name}`);
      else if (item.in === 'cookie') {
        // Sent as it is, as a browser or curl sends it: a server reads a cookie's octets without
        // percent-decoding them, so `ab/c+d==` encoded would no longer be the key.
        const problem = cookieValueProblem(value);
        if (problem !== undefined)
          throw new ToolError(`The API key ${item.name} cannot be sent in a cookie: ${problem}.`, {
            toolName,
          });
        cookies.push(`${item.name}=${value}`);
      } else {
        query.push(`${encodeURIComponent(item.name)}=${encodeURIComponent(value)}`);
        displayQuery.push(`${encodeURIComponent(item.name)}=***`);
      }
    }
  }
  if (plan.urlCredentials !== undefined && !headers.has('authorization')) {
    const { username, password } = plan.urlCredentials;
    const credentials = basicCredentials(username, password);
    if (password !== '') secrets.push({ value: password, label: 'password of the server URL' });
    secrets.push({ value: credentials.slice('Basic '.length), label: 'basic credentials' });
    setCredential('authorization', credentials, 'password of the server URL');
  }
  if (cookies.length > 0) headers.set('cookie', cookies.join('; '));
  headers.set('accept', acceptHeader(operation.responseMediaTypes));

  let body: RequestInit['body'];
  const bodyValue = args[bodyProperty];
  if (operation.body !== undefined && bodyValue !== undefined) {
    refuseCredentialFields(bodyValue, plan.bodySchema, credentialQuery, toolName);
    const { kind, mediaType } = operation.body;
    if (kind === 'multipart') {
      body = multipartBody(bodyValue, plan.bodySchema, operation.body.encoding, toolName);
    } else {
      if (kind === 'json') body = JSON.stringify(bodyValue);
      else if (kind === 'form') body = formBody(bodyValue, operation.body.encoding, toolName);
      else body = typeof bodyValue === 'string' ? bodyValue : JSON.stringify(bodyValue);
      headers.set('content-type', mediaType);
    }
  }
  if (plan.sendCredentials)
    for (const [name, value] of Object.entries(plan.headers ?? {})) {
      setCredential(name, value, `value of the headers option's ${name}`);
      // Only what reads as a credential (`X-Api-Key`, a `Bearer …` value, a key under any name
      // but a descriptive one): `Accept: application/json` replaced in every answer would mangle it.
      if (!isCredentialHeader(name, value)) continue;
      secrets.push({ value, label: `header ${name}` });
      const scheme = /^(?:Bearer|Basic|Token)\s+(\S+)$/i.exec(value.trim());
      if (scheme?.[1] !== undefined) secrets.push({ value: scheme[1], label: `header ${name}` });
    }

  // A base URL may carry a query (`…/v1?api-version=2024-01-01`) or a fragment: the operation's
  // path goes before them, not into the query (which sent every call to the base path itself).
  const { base, baseQuery } = splitBaseUrl(plan.baseUrl);
  // A key written into the base URL (`?key=…`, as some APIs take it) is a credential too: masked
  // where the URL is shown, and hidden where an answer echoes it.
  const displayBaseQuery = maskCredentialPairs(baseQuery, secrets);
  const search = (fixed: string, pairs: readonly string[]) => {
    const all = fixed === '' ? pairs : [fixed, ...pairs];
    return all.length > 0 ? `?${all.join('&')}` : '';
  };
  return {
    method: operation.method.toUpperCase(),
    url: `${base}${path}${search(baseQuery, query)}`,
    displayUrl: `${base}${path}${search(displayBaseQuery, displayQuery)}`,
    headers,
    body,
    secrets,
  };
}

/**
 * `query` (`a=1&key=…`) with the values of pairs that read as credentials (core's
 * `isCredentialVariable`: `key`, `api_key`, `token`… with a value like a secret) replaced by
 * `***`; each such value is added to `secrets`.
 */
function maskCredentialPairs(query: string, secrets: SentSecret[]): string {
  if (query === '') return query;
  return query
    .split('&')
    .map((pair) => {
      const at = pair.indexOf('=');
      if (at === -1) return pair;
      const name = safeDecode(pair.slice(0, at));
      const value = safeDecode(pair.slice(at + 1));
      if (!isCredentialVariable(name, value)) return pair;
      secrets.push({ value, label: `query ${name}` });
      return `${pair.slice(0, at)}=***`;
    })
    .join('&');
}

/**
 * Throws when a body field the model named itself (one its schema does not declare) reads as the
 * API key's query parameter: PHP's `$_REQUEST`, Rails' `params` and Laravel's `input()` merge
 * the body over the query, so the model's key would replace the user's.
 */
function refuseCredentialFields(
  body: unknown,
  schema: JsonSchema | undefined,
  credentialQuery: ReadonlyMap<string, string>,
  toolName: string,
): void {
  if (credentialQuery.size === 0 || !isRecord(body)) return;
  const declared = schema?.properties ?? {};
  for (const field of Object.keys(body)) {
    if (Object.hasOwn(declared, field)) continue;
    const credential = credentialQuery.get(queryNameKey(field));
    if (credential !== undefined)
      throw ToolError.invalidArguments(
        toolName,
        `at "body.${field}": the field reads as the query parameter "${credential}" to servers that merge the body into the query, which carries the API's credential and is filled by the client`,
      );
  }
}

/**
 * A query parameter's name as the most lenient servers read it, to tell when two names are one:
 * lower-cased (ASP.NET and many gateways ignore case), `.` ` ` and an unclosed `[` as `_` (PHP),
 * and `name[…]` as `name` (PHP and qs read `key[]`, `key[0]` as the array `key`).
 */
export function queryNameKey(name: string): string {
  const lower = name.toLowerCase();
  const bracket = lower.indexOf('[');
  const base = bracket > 0 && lower.includes(']', bracket) ? lower.slice(0, bracket) : lower;
  return base.replace(/[ .[]/g, '_');
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
}

/** A base URL without its fragment, split at its query; the path part without trailing `/`. */
function splitBaseUrl(url: string): { base: string; baseQuery: string } {
  const hash = url.indexOf('#');
  const withoutFragment = hash === -1 ? url : url.slice(0, hash);
  const mark = withoutFragment.indexOf('?');
  const pathPart = mark === -1 ? withoutFragment : withoutFragment.slice(0, mark);
  return {
    base: pathPart.replace(/(?<!\/)\/+$/, ''),
    baseQuery: mark === -1 ? '' : withoutFragment.slice(mark + 1),
  };
}

function acceptHeader(mediaTypes: readonly string[]): string {
  if (mediaTypes.length === 0) return 'application/json, */*;q=0.8';
  // JSON first: it is what the model reads best.
  const sorted = [...mediaTypes].sort(
    (a, b) => Number(isJsonMediaType(b)) - Number(isJsonMediaType(a)),
  );
  return sorted.includes('*/*') ? sorted.join(', ') : [...sorted, '*/*;q=0.1'].join(', ');
}

/** A scalar as text: strings as they are, other scalars with `String`, objects as JSON. */
function scalarText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value) ?? '';
}

function jsonText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

const encode = (text: string): string => encodeURIComponent(text);

/** The path segment for one path parameter, per its style (simple, label, matrix) and explode. */
export function pathValue(parameter: NormalizedParameter, value: unknown): string {
  if (parameter.contentType !== undefined) return encode(jsonText(value));
  const { style, explode, name } = parameter;
  const items = Array.isArray(value) ? value.map((item) => encode(scalarText(item))) : undefined;
  const entries = isRecord(value)
    ? Object.entries(value).map(([key, item]) => [encode(key), encode(scalarText(item))] as const)
    : undefined;
  if (style === 'label') {
    if (items !== undefined) return `.${items.join(explode ? '.' : ',')}`;
    if (entries !== undefined)
      return `.${entries.map(([key, item]) => (explode ? `${key}=${item}` : `${key},${item}`)).join(explode ? '.' : ',')}`;
    return `.${encode(scalarText(value))}`;
  }
  if (style === 'matrix') {
    const key = encode(name);
    if (items !== undefined)
      return explode
        ? items.map((item) => `;${key}=${item}`).join('')
        : `;${key}=${items.join(',')}`;
    if (entries !== undefined)
      return explode
        ? entries.map(([entry, item]) => `;${entry}=${item}`).join('')
        : `;${key}=${entries.map(([entry, item]) => `${entry},${item}`).join(',')}`;
    return `;${key}=${encode(scalarText(value))}`;
  }
  if (items !== undefined) return items.join(',');
  if (entries !== undefined)
    return entries.map(([key, item]) => (explode ? `${key}=${item}` : `${key},${item}`)).join(',');
  return encode(scalarText(value));
}

/**
 * `name=value` pairs (already percent-encoded) for one query parameter, per its style and explode.
 * Throws {@link UnsendableValueError} for a value its style cannot carry.
 */
export function queryPairs(parameter: NormalizedParameter, value: unknown): string[] {
  const valueEncode = parameter.allowReserved ? encodeReserved : encode;
  const name = encode(parameter.name);
  if (parameter.contentType !== undefined) return [`${name}=${valueEncode(jsonText(value))}`];
  const { style, explode } = parameter;
  const delimiter = joiningDelimiter(style, explode);
  if (Array.isArray(value)) {
    if (value.length === 0) return [];
    const texts = value.map(scalarText);
    if (delimiter !== undefined) return [`${name}=${joinDelimited(texts, delimiter, valueEncode)}`];
    if (explode) return texts.map((text) => `${name}=${valueEncode(text)}`);
    // Encoded, a "," inside a value is %2C and the delimiter stays itself; allowReserved keeps
    // both literal, so such a value could not be told from two.
    if (parameter.allowReserved) return [`${name}=${joinDelimited(texts, ',', valueEncode)}`];
    return [`${name}=${texts.map(valueEncode).join(',')}`];
  }
  if (isRecord(value)) {
    if (style === 'deepObject') return deepObjectPairs(name, value, valueEncode);
    const entries = Object.entries(value).filter(([, item]) => item !== undefined && item !== null);
    if (explode)
      return entries.map(([key, item]) => `${encode(key)}=${valueEncode(scalarText(item))}`);
    if (delimiter !== undefined) {
      const texts = entries.flatMap(([key, item]) => [key, scalarText(item)]);
      return [`${name}=${joinDelimited(texts, delimiter, valueEncode)}`];
    }
    if (parameter.allowReserved) {
      const texts = entries.flatMap(([key, item]) => [key, scalarText(item)]);
      return [`${name}=${joinDelimited(texts, ',', valueEncode)}`];
    }
    const joined = entries.flatMap(([key, item]) => [encode(key), valueEncode(scalarText(item))]);
    return [`${name}=${joined.join(',')}`];
  }
  return [`${name}=${valueEncode(scalarText(value))}`];
}

/**
 * The pieces (`name=value`, joined by `&`) of an OpenAPI 3.2 `querystring` parameter: the whole
 * query string, written by its media type. A form takes an object of fields (as a form body's,
 * explode by default) or a query string the model wrote, kept as written but for characters a
 * query cannot hold (`#` would end it, a lone `%` would garble the next two); JSON and any other
 * type are one percent-encoded piece.
 */
export function wholeQueryPairs(parameter: NormalizedParameter, value: unknown): string[] {
  const mediaType = (parameter.contentType ?? formMediaType).split(';')[0]?.trim().toLowerCase();
  if (mediaType === formMediaType) {
    if (isRecord(value))
      return Object.entries(value).flatMap(([field, item]) =>
        formFieldPairs(field, item, undefined).map(
          ([name, text]) => `${encode(name)}=${encode(text)}`,
        ),
      );
    if (typeof value === 'string')
      return value
        .replace(/^\?/, '')
        .split('&')
        .filter((piece) => piece !== '')
        .map(queryTextAsWritten);
  }
  const text = isJsonMediaType(mediaType ?? '') ? JSON.stringify(value) : scalarText(value);
  return text === '' ? [] : [encode(text)];
}

/** A piece of a query string as the model wrote it, with what a query cannot hold encoded. */
function queryTextAsWritten(piece: string): string {
  return piece.replace(/%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~!$'()*,;:@/?%=+]/gu, (character) =>
    encode(character),
  );
}

function deepObjectPairs(
  prefix: string,
  value: Record<string, unknown>,
  valueEncode: (text: string) => string,
): string[] {
  const pairs: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined || item === null) continue;
    const name = `${prefix}[${encode(key)}]`;
    if (isRecord(item)) pairs.push(...deepObjectPairs(name, item, valueEncode));
    else if (Array.isArray(item))
      for (const element of item) pairs.push(`${name}=${valueEncode(scalarText(element))}`);
    else pairs.push(`${name}=${valueEncode(scalarText(item))}`);
  }
  return pairs;
}

// Header style `simple`: arrays `a,b`; objects `k,v,k2,v2` (or `k=v,k2=v2` when exploded).
function simpleValue(value: unknown, explode: boolean): string {
  if (Array.isArray(value)) return value.map(scalarText).join(',');
  if (isRecord(value))
    return Object.entries(value)
      .map(([key, item]) => (explode ? `${key}=${scalarText(item)}` : `${key},${scalarText(item)}`))
      .join(',');
  return scalarText(value);
}

/**
 * A cookie parameter's value: style `form` not exploded (RFC 6570), percent-encoded so `;` `=` `,`
 * and characters outside ASCII stay inside it; arrays and objects comma-joined (`blue,black`,
 * `R,100,G,200`). Exploded form would join cookies with `&`, which OpenAPI 3.2 (appendix D) calls
 * always incorrect for cookies, so it is not used.
 */
function cookieValue(parameter: NormalizedParameter, value: unknown): string {
  if (parameter.contentType !== undefined) return encode(jsonText(value));
  if (Array.isArray(value)) return value.map((item) => encode(scalarText(item))).join(',');
  if (isRecord(value))
    return Object.entries(value)
      .filter(([, item]) => item !== undefined && item !== null)
      .flatMap(([key, item]) => [encode(key), encode(scalarText(item))])
      .join(',');
  return encode(scalarText(value));
}

/**
 * Why `text` cannot be a header value, or `undefined`. A line break would end the header (and
 * `Headers` quietly trims one at either end, so `abc\r\n` would go out as `abc`); other control
 * characters are refused by the HTTP client later, with a message that quotes the value.
 */
export function headerValueProblem(text: string): string | undefined {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 0x0d || code === 0x0a)
      return 'a header value may not hold a line break (CR or LF)';
    if ((code < 0x20 && code !== 0x09) || code === 0x7f)
      return `a header value may not hold the control character U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
    if (code > 0xff) return 'a header value may only hold Latin-1 characters';
  }
  return undefined;
}

// URL parsers resolve "." and ".." segments (also spelled %2e), so a path parameter with such a
// value would send the request to another path than the one its permission subject names.
const dotSegment = /^(?:\.|%2e){1,2}$/i;

/** Throws when filling the path parameters produced a "." or ".." segment the template lacks. */
function refuseDotSegments(template: string, path: string, toolName: string): void {
  // Most paths hold no dot at all (percent-encoding turns a "." parameter into "." or "%2e").
  if (!path.includes('.') && !path.includes('%2')) return;
  const literal = template.split('/').filter((segment) => dotSegment.test(segment)).length;
  const filled = path.split('/').filter((segment) => dotSegment.test(segment)).length;
  if (filled > literal) {
    throw ToolError.invalidArguments(
      toolName,
      `a path parameter may not be "." or ".." (it would change the path ${template})`,
    );
  }
}
