import {
  AgentError,
  type AgentTool,
  hideSecretsInError,
  hideSecretsInResult,
  type PermissionTier,
  secretHider,
  ToolError,
  type ToolPolicy,
  type ToolResult,
  validateWithJsonSchema,
} from '@agent/core';
import type { OpenAPIV2, OpenAPIV3, OpenAPIV3_1 } from 'openapi-types';
import { bodyProperty, buildArgumentsSchema } from './arguments-schema.js';
import { authFor, type OpenApiAuth, type ResolvedAuth, resolveAuth } from './auth.js';
import { credentialHeaderNames, fetchScoped, originOf } from './credential-scope.js';
import {
  defaultMaxDocumentBytes,
  fetchDocument,
  fetchFailure,
  readDocumentFile,
} from './document-source.js';
import { httpTokenProblem, isHttpToken } from './http-names.js';
import {
  declaresIdempotencyKey,
  idempotencyKeyFor,
  idempotencyKeyHeader,
  isIdempotentMethod,
} from './idempotency.js';
import { normalizeDocument } from './normalize.js';
import type {
  NormalizedDocument,
  NormalizedOperation,
  NormalizedParameter,
  NormalizedServer,
} from './normalized-types.js';
import {
  matchesOperation,
  type OpenApiOperationInfo,
  type OperationSelector,
} from './operation-filter.js';
import { parseDocumentText } from './parse-document.js';
import { createRedirectGuard } from './redirect-guard.js';
import {
  type BuiltRequest,
  buildRequest,
  queryNameKey,
  type RequestPlan,
} from './request-builder.js';
import {
  defaultResponseLimits,
  type OpenApiResultDetails,
  type ResponseLimits,
  responseToResult,
} from './response-reader.js';
import { responseSearchText } from './response-search-text.js';
import {
  clipDescription,
  defaultSchemaConvertLimits,
  type SchemaBudget,
} from './schema-convert.js';

import { uniqueToolNames } from './tool-name.js';

/** Redirects out of the API into a private network are refused (redirect-guard.ts). */
const redirectGuard = createRedirectGuard();

/** An OpenAPI 2.0, 3.0 or 3.1 document as parsed JSON. */
export type OpenApiDocument =
  | OpenAPIV2.Document
  | OpenAPIV3.Document
  | OpenAPIV3_1.Document
  | Record<string, unknown>;

/** Arguments of an OpenAPI tool: parameters by (provider-safe) name, and `body`. */
export type OpenApiArguments = Record<string, unknown>;

/** An `AgentTool` made from one operation; `operation` says which. */
export interface OpenApiTool extends AgentTool<OpenApiArguments, OpenApiResultDetails> {
  readonly operation: OpenApiOperationInfo;
}

/** Extra headers for every request, or per operation. */
export type OpenApiHeaders =
  | Record<string, string>
  | ((operation: OpenApiOperationInfo) => Record<string, string> | Promise<Record<string, string>>);

/** Options of {@link OpenApiToolAdapter}. */
export interface OpenApiToolOptions {
  /** Name of the API in each tool's `source` (`openapi:<name>`) [slug of `info.title`, else `api`]. */
  name?: string;
  /** Prepended to every tool name, e.g. `github_` (the whole name still fits 64 characters). */
  namePrefix?: string;
  /** Base URL of every request, overriding the document's servers (e.g. a staging host). */
  baseUrl?: string;
  /** Values for the server URL's `{variables}` [their defaults]. */
  serverVariables?: Record<string, string>;
  /** Credentials (see {@link OpenApiAuth}). */
  auth?: OpenApiAuth | readonly OpenApiAuth[];
  /** Extra headers, applied last; a header parameter they cover is not asked of the model. */
  headers?: OpenApiHeaders;
  /** The `fetch` used for requests (and by `fromUrl` for the document) [globalThis.fetch]. */
  fetch?: typeof globalThis.fetch;
  /** Only operations matching one of these become tools [all]. */
  include?: readonly OperationSelector[];
  /** Operations matching one of these are left out. */
  exclude?: readonly OperationSelector[];
  /**
   * At most this many tools; past it the rest are left out with a warning [no limit: an agent
   * defers a large catalogue to its `tool_search` automatically, so no operation is lost].
   */
  maxTools?: number;
  /**
   * Origins besides the API's own (its document-level servers, or `baseUrl`) that may receive
   * credentials — auth and the `headers` option — e.g. `['https://uploads.github.com']`. An
   * operation whose server is on any other origin is called without them, and a redirect to
   * another origin is followed without them.
   */
  credentialOrigins?: readonly string[];
  /**
   * Follow redirects from the API to another origin on a loopback, private, link-local or
   * reserved address [false: refused with a `denied` error, unless the API's own host is not
   * public either]. See the README's "Redirects into a private network".
   */
  allowPrivateRedirects?: boolean;
  /** Receives warnings (left-out operations, undeclared path parameters…) [console.warn]. */
  onWarning?: (message: string) => void;
  /** Permission tier per operation [GET, HEAD, OPTIONS: read-only; others: full-access]. */
  permission?: (operation: OpenApiOperationInfo) => PermissionTier | undefined;
  /**
   * Send an `Idempotency-Key` header (derived from the run and call ids, so a resumed run repeats
   * it) on requests whose method is not idempotent (POST, PATCH…) [true]. An operation that
   * declares the header gets it filled in instead of asking the model.
   */
  idempotencyKeys?: boolean;
  /**
   * Policy fields added to every tool (e.g. `timeoutMs`, `maxResultChars`). `repeatable` defaults
   * to true for idempotent methods (GET, HEAD, OPTIONS, TRACE, PUT, DELETE), read-only
   * operations, and operations that declare an `Idempotency-Key` header we fill in.
   */
  policy?: Omit<ToolPolicy, 'permission' | 'resourceKey'>;
  /** Longest tool or parameter description, in characters [1024]. */
  maxDescriptionChars?: number;
  /**
   * Most operations a document may hold, counted before include/exclude [100,000]; a larger one
   * is an `OpenApiSpecError`. Each costs memory, and path items reused through `$ref` multiply
   * them.
   */
  maxOperations?: number;
  /**
   * Most schema nodes all tools' schemas may hold together after `$ref`s are inlined
   * [20,000,000; Microsoft Graph's 11,422 tools need about 5 million]; past it loading stops with
   * an `OpenApiSpecError` (a small document whose operations all use one large schema would
   * otherwise take minutes and gigabytes). Operations left out by include/exclude do not count.
   */
  maxSchemaNodes?: number;
  /** Characters of a successful response shown to the model [50000]. */
  maxResponseChars?: number;
  /** Bytes of a response body read at most [10 MiB]. */
  maxResponseBytes?: number;
  /** Characters of an error response's body shown to the model [4000]. */
  maxErrorChars?: number;
  /** Largest image returned as image content, in bytes [5 MiB]. */
  maxImageBytes?: number;
  /**
   * Mark what the API wrote as untrusted before the model reads it [true]: a JSON body becomes a
   * JSON block after a note, a text body (or an error's) goes between random-id markers a
   * response cannot forge. `false` shows bodies raw, as text: for an API you trust, or a program
   * that parses the result's text itself.
   */
  markUntrusted?: boolean;
  /** Where the document came from, to resolve relative server URLs (set by `fromUrl`). */
  documentUrl?: string;
}

/** How much of a document `fromFile` and `fromUrl` read. */
export interface OpenApiDocumentLimits {
  /** Largest document read, in bytes; a larger one is an error saying so [64 MiB]. */
  maxDocumentBytes?: number;
}

/** Options of {@link OpenApiToolAdapter.fromUrl}. */
export interface OpenApiFromUrlOptions extends OpenApiToolOptions, OpenApiDocumentLimits {
  /** Aborts the download of the document. */
  signal?: AbortSignal;
}

const defaultMaxTools = Number.POSITIVE_INFINITY;
/** Default of `maxSchemaNodes`: four times what Microsoft Graph's document needs. */
const defaultMaxSchemaNodes = 20_000_000;
// QUERY (OpenAPI 3.2, the HTTP QUERY method) is safe: a read whose question is in its body.
const readOnlyMethods = new Set(['GET', 'HEAD', 'OPTIONS', 'QUERY']);

/**
 * Turns an OpenAPI 3.0/3.1 or Swagger 2.0 document (JSON or YAML, local `$ref`s only) into one
 * `AgentTool` per operation. Load with `fromString`, `fromFile`, `fromUrl` or `fromSpec`; the
 * tools are in `tools`. A bad document throws an `OpenApiSpecError` naming the JSON pointer.
 */
export class OpenApiToolAdapter {
  /** One tool per included operation, in document order. */
  readonly tools: readonly OpenApiTool[];
  /** Warnings met while loading (also sent to `onWarning`). */
  readonly warnings: readonly string[];
  /** The source name: tools have `source: 'openapi:<name>'`. */
  readonly name: string;
  /** `2.0`, `3.0` or `3.1`. */
  readonly specVersion: NormalizedDocument['dialect'];
  /** `info.title` of the document. */
  readonly title: string | undefined;
  /** `info.version` of the document. */
  readonly apiVersion: string | undefined;
  /** Number of operations in the document, before include/exclude and `maxTools`. */
  readonly operationCount: number;

  private constructor(document: unknown, options: OpenApiToolOptions) {
    const warnings: string[] = [];
    const onWarning =
      options.onWarning ?? ((message: string) => console.warn(`[@agent/tools-openapi] ${message}`));
    const warn = (message: string) => {
      warnings.push(message);
      onWarning(message);
    };
    const normalized = normalizeDocument(document, { warn, maxOperations: options.maxOperations });
    this.warnings = warnings;
    this.specVersion = normalized.dialect;
    this.title = normalized.title;
    this.apiVersion = normalized.apiVersion;
    this.operationCount = normalized.operations.length;
    this.name = options.name ?? slug(normalized.title ?? '') ?? 'api';
    const auth = resolveAuth(options.auth, normalized.securitySchemes);
    if (typeof options.headers === 'object')
      for (const header of Object.keys(options.headers))
        if (!isHttpToken(header)) throw new AgentError(`headers: ${httpTokenProblem(header)}`);

    const selected = normalized.operations.filter((operation) => {
      const info = operationInfo(operation);
      if (
        options.include !== undefined &&
        !options.include.some((selector) => matchesOperation(info, selector))
      )
        return false;
      return !(options.exclude ?? []).some((selector) => matchesOperation(info, selector));
    });
    const maxTools = options.maxTools ?? defaultMaxTools;
    if (selected.length > maxTools) {
      warn(
        `${normalized.title ?? 'The API'} has ${selected.length} operations${options.include || options.exclude ? ' after include/exclude' : ''}; only the first ${maxTools} became tools (maxTools). Choose operations with include/exclude or raise maxTools.`,
      );
    }
    const kept = selected.slice(0, Math.max(0, maxTools));
    const trusted = trustedOrigins(normalized.servers, options);
    const untrusted = new Map<string, number>();
    const prefix = options.namePrefix ?? '';
    const budget: SchemaBudget = {
      used: 0,
      max: options.maxSchemaNodes ?? defaultMaxSchemaNodes,
    };
    const names = uniqueToolNames(
      kept.map((operation) => `${prefix}${operation.operationId ?? routeName(operation)}`),
      kept.map((operation) => `${prefix}${routeName(operation)}`),
    );
    this.tools = kept.map((operation, index) =>
      createOperationTool({
        operation,
        name: names[index] ?? routeName(operation),
        document: normalized,
        options,
        auth,
        source: `openapi:${this.name}`,
        untrustedOrigin: options.markUntrusted === false ? undefined : `the API "${this.name}"`,
        trustedOrigins: trusted,
        budget,
        onUntrustedOrigin: (origin) => untrusted.set(origin, (untrusted.get(origin) ?? 0) + 1),
      }),
    );
    for (const [origin, count] of untrusted) {
      warn(
        `${count} operation${count === 1 ? '' : 's'} call${count === 1 ? 's' : ''} ${origin}, which is not the API's origin (${[...trusted].join(', ') || 'none'}): no credentials are sent there. List it in credentialOrigins to send them.`,
      );
    }
  }

  /** Tools from a parsed document (OpenAPI 3.0/3.1 or Swagger 2.0). */
  static fromSpec(document: OpenApiDocument, options: OpenApiToolOptions = {}): OpenApiToolAdapter {
    return new OpenApiToolAdapter(document, options);
  }

  /** Tools from a document's text, JSON or YAML. */
  static fromString(text: string, options: OpenApiToolOptions = {}): OpenApiToolAdapter {
    return new OpenApiToolAdapter(parseDocumentText(text), options);
  }

  /** Tools from a JSON or YAML file (Node.js only): a regular file of at most `maxDocumentBytes`. */
  static async fromFile(
    path: string,
    options: OpenApiToolOptions & OpenApiDocumentLimits = {},
  ): Promise<OpenApiToolAdapter> {
    const text = await readDocumentFile(path, options.maxDocumentBytes ?? defaultMaxDocumentBytes);
    return OpenApiToolAdapter.fromString(text, options);
  }

  /**
   * Tools from a document fetched over HTTP(S), of at most `maxDocumentBytes`; relative server URLs
   * resolve against `url`.
   */
  static async fromUrl(
    url: string | URL,
    options: OpenApiFromUrlOptions = {},
  ): Promise<OpenApiToolAdapter> {
    const href = String(url);
    const text = await fetchDocument(href, {
      fetch: options.fetch ?? globalThis.fetch,
      maxBytes: options.maxDocumentBytes ?? defaultMaxDocumentBytes,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return OpenApiToolAdapter.fromString(text, { documentUrl: href, ...options });
  }

  /** The tool with this name, if any. */
  tool(name: string): OpenApiTool | undefined {
    return this.tools.find((tool) => tool.name === name);
  }
}

interface CreateToolParams {
  operation: NormalizedOperation;
  name: string;
  document: NormalizedDocument;
  options: OpenApiToolOptions;
  auth: readonly ResolvedAuth[];
  source: string;
  /** Who wrote the responses, for the untrusted-content note; `undefined` shows them raw. */
  untrustedOrigin: string | undefined;
  /** Origins that may receive credentials. */
  trustedOrigins: ReadonlySet<string>;
  /** The document's budget of converted schema nodes (shared by its tools). */
  budget: SchemaBudget;
  onUntrustedOrigin: (origin: string) => void;
}

function createOperationTool(params: CreateToolParams): OpenApiTool {
  const { operation, name, document, options } = params;
  const info = operationInfo(operation);
  const subject = `${info.method} ${operation.path}`;
  const auth = authFor(operation, params.auth);
  const server = resolveBaseUrl(operation.servers, options);
  const serverOrigin = server.url === undefined ? undefined : originOf(server.url);
  const sendCredentials = serverOrigin !== undefined && params.trustedOrigins.has(serverOrigin);
  if (serverOrigin !== undefined && !sendCredentials) params.onUntrustedOrigin(serverOrigin);
  // Where no credentials go, the parameters they would have filled are asked of the model.
  const fixedHeaders =
    sendCredentials && typeof options.headers === 'object'
      ? new Set(Object.keys(options.headers).map((key) => key.toLowerCase()))
      : new Set<string>();
  const credentialQuery = auth.flatMap((item) =>
    item.type === 'apiKey' && item.in === 'query' ? [item.name] : [],
  );
  const maxDescriptionChars =
    options.maxDescriptionChars ?? defaultSchemaConvertLimits.maxDescriptionChars;
  const sendsKey = options.idempotencyKeys !== false && !isIdempotentMethod(operation);
  const argumentsSchema = buildArgumentsSchema(operation, {
    reader: document.reader,
    limits: { ...defaultSchemaConvertLimits, maxDescriptionChars },
    budget: params.budget,
    omitParameter: (parameter) =>
      coveredByClient(parameter, sendCredentials ? auth : [], fixedHeaders) ||
      (sendsKey && isIdempotencyKeyParameter(parameter)),
  });
  const parameters = argumentsSchema.schema;
  const plan: Omit<RequestPlan, 'headers'> = {
    sendCredentials,
    toolName: name,
    operation,
    bindings: argumentsSchema.bindings,
    bodySchema: parameters.properties?.[bodyProperty],
    baseUrl: server.url,
    baseUrlProblem: server.problem,
    urlCredentials: server.userinfo,
    auth,
  };
  const limits: ResponseLimits = {
    maxResponseBytes: options.maxResponseBytes ?? defaultResponseLimits.maxResponseBytes,
    maxResponseChars: options.maxResponseChars ?? defaultResponseLimits.maxResponseChars,
    maxErrorChars: options.maxErrorChars ?? defaultResponseLimits.maxErrorChars,
    maxImageBytes: options.maxImageBytes ?? defaultResponseLimits.maxImageBytes,
  };
  const permission =
    options.permission?.(info) ?? (readOnlyMethods.has(info.method) ? 'read-only' : 'full-access');
  const fetchImpl = options.fetch;
  const checkRedirect = options.allowPrivateRedirects === true ? undefined : redirectGuard;
  const repeatable =
    permission === 'read-only' ||
    isIdempotentMethod(operation) ||
    (sendsKey && declaresIdempotencyKey(operation));

  // Only a read says what it answers: a write returns the resource it wrote, the same fields as
  // its read (measured: indexing those too cost the held-out set's indirect requests).
  const searchText =
    operation.method === 'get' || operation.method === 'query'
      ? responseSearchText(document.reader, operation.successSchema)
      : undefined;
  return {
    name,
    label: operation.summary ?? subject,
    description: toolDescription(operation, subject, maxDescriptionChars),
    parameters,
    source: params.source,
    // The route is in the description already; the tags group operations as the vendor does.
    keywords: operation.tags,
    // What the operation returns, for search only: never part of the tool's schema.
    ...(searchText === undefined ? {} : { searchText }),
    operation: info,
    policy: { repeatable, ...options.policy, permission },
    // Validated against the schema, but passed on as the model wrote them: filling in schema
    // defaults would send fields (e.g. PATCH body defaults) the model never chose.
    validate: (args) => {
      const result = validateWithJsonSchema(parameters, args);
      return result.ok ? { ok: true, value: args as OpenApiArguments } : result;
    },
    permissionSubjects: () => [subject],
    execute: async (args, ctx) => {
      const { signal } = ctx;
      if (signal.aborted) throw ToolError.cancelled(name);
      const headers =
        typeof options.headers === 'function' ? await options.headers(info) : options.headers;
      const request = await buildRequest({ ...plan, headers }, args);
      // A key the model or the headers option set is theirs to choose.
      if (sendsKey && !request.headers.has(idempotencyKeyHeader))
        request.headers.set(idempotencyKeyHeader, await idempotencyKeyFor(ctx));
      // What comes back never holds what the request carried (core's secret-echo.ts).
      const hide = secretHider(request.secrets);
      const failure = (error: unknown, stage: string): ToolError => {
        if (signal.aborted) return ToolError.cancelled(name);
        if (ToolError.isInstance(error)) return hideSecretsInError(error, hide);
        return new ToolError(
          hide(`${request.method} ${request.displayUrl} failed${stage}: ${fetchFailure(error)}`),
          {
            toolName: name,
            cause: error,
          },
        );
      };
      // fetch gets a signal of its own, linked to the call's for the call's duration only:
      // undici leaves its abort listener on the signal it is given until the request is garbage
      // collected (and counts the listeners already there on each request), so handing it a
      // long-lived signal made every call slower than the one before (issue 15's call row).
      const controller = new AbortController();
      const abort = () => controller.abort(signal.reason);
      signal.addEventListener('abort', abort, { once: true });
      try {
        return hideSecretsInResult(await send(request, controller.signal, failure, headers), hide);
      } finally {
        signal.removeEventListener('abort', abort);
      }
    },
  };

  async function send(
    request: BuiltRequest,
    signal: AbortSignal,
    failure: (error: unknown, stage: string) => ToolError,
    headers: Record<string, string> | undefined,
  ): Promise<ToolResult<OpenApiResultDetails>> {
    let response: Response;
    try {
      ({ response } = await fetchScoped({
        fetch: fetchImpl ?? globalThis.fetch,
        url: request.url,
        init: {
          method: request.method,
          headers: request.headers,
          ...(request.body === undefined ? {} : { body: request.body }),
          signal,
        },
        credentialHeaders: credentialHeaderNames(auth, headers),
        credentialQuery,
        ...(checkRedirect === undefined ? {} : { checkRedirect }),
        toolName: name,
      }));
    } catch (error) {
      throw failure(error, '');
    }
    try {
      return await responseToResult(response, {
        method: request.method,
        displayUrl: request.displayUrl,
        limits,
        responseDescriptions: operation.responseDescriptions,
        untrustedOrigin: params.untrustedOrigin,
      });
    } catch (error) {
      throw failure(error, ' while reading the response');
    }
  }
}

function operationInfo(operation: NormalizedOperation): OpenApiOperationInfo {
  return {
    method: operation.method.toUpperCase() as OpenApiOperationInfo['method'],
    path: operation.path,
    operationId: operation.operationId,
    summary: operation.summary,
    tags: operation.tags,
    deprecated: operation.deprecated,
    pointer: operation.pointer,
  };
}

function routeName(operation: NormalizedOperation): string {
  return `${operation.method}_${operation.path}`;
}

// A parameter the client fills itself (an API key, a fixed header) is not asked of the model.
function isIdempotencyKeyParameter(parameter: NormalizedParameter): boolean {
  return (
    parameter.in === 'header' && parameter.name.toLowerCase() === idempotencyKeyHeader.toLowerCase()
  );
}

function headerNameKey(name: string): string {
  return name.toLowerCase().replaceAll('_', '-');
}

function coveredByClient(
  parameter: NormalizedParameter,
  auth: readonly ResolvedAuth[],
  fixedHeaders: ReadonlySet<string>,
): boolean {
  if (parameter.in === 'header' && fixedHeaders.has(parameter.name.toLowerCase())) return true;
  return auth.some(
    (item) =>
      item.type === 'apiKey' &&
      item.in === parameter.in &&
      (parameter.in === 'header'
        ? // CGI and WSGI servers read `X_Api_Key` and `X-Api-Key` as one header.
          headerNameKey(item.name) === headerNameKey(parameter.name)
        : parameter.in === 'query'
          ? // Another spelling a lenient server reads as the key's name is the key's too.
            queryNameKey(item.name) === queryNameKey(parameter.name)
          : item.name === parameter.name),
  );
}

function toolDescription(operation: NormalizedOperation, subject: string, max: number): string {
  const parts = [operation.summary === undefined ? subject : `${operation.summary} (${subject})`];
  if (operation.description !== undefined && operation.description !== operation.summary)
    parts.push(operation.description);
  if (operation.deprecated) parts.push('Deprecated.');
  return clipDescription(parts.join('\n\n'), max);
}

/**
 * The origins that may receive credentials: the document-level servers' (or `baseUrl`'s) and
 * `credentialOrigins`. Servers an operation or path names for itself are not among them.
 */
function trustedOrigins(
  servers: readonly NormalizedServer[],
  options: OpenApiToolOptions,
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
interface ResolvedBaseUrl {
  url: string | undefined;
  problem: string;
  /** The user name and password the URL held (taken out of `url`). */
  userinfo?: { username: string; password: string };
}

function resolveBaseUrl(
  servers: readonly NormalizedServer[],
  options: OpenApiToolOptions,
): ResolvedBaseUrl {
  if (options.baseUrl !== undefined) return webUrl(options.baseUrl);
  const server = servers[0] ?? { url: '/', variables: {} };
  const missing: string[] = [];
  const outside: string[] = [];
  const url = server.url.replace(/\{([^{}]+)\}/g, (match, variable: string) => {
    const value = options.serverVariables?.[variable] ?? server.variables[variable]?.default;
    if (value === undefined) missing.push(variable);
    const allowed = server.variables[variable]?.enum;
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

function slug(text: string): string | undefined {
  // Whole words up to 32 characters: "GitHub's official OpenAPI spec + Octokit…" → githubs-official-openapi-spec.
  const words = text
    .toLowerCase()
    .replace(/['’]/g, '')
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  let value = '';
  for (const word of words) {
    const next = value === '' ? word : `${value}-${word}`;
    if (next.length > 32) break;
    value = next;
  }
  if (value === '' && words[0] !== undefined) value = words[0].slice(0, 32);
  return value === '' ? undefined : value;
}
