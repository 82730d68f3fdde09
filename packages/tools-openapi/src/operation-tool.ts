// One operation of a document as an AgentTool: its arguments schema, what the client fills itself
// (credentials, fixed headers, the idempotency key), its permission, and the call that sends it.
import {
  hideSecretsInError,
  hideSecretsInResult,
  secretHider,
  ToolError,
  type ToolResult,
  validateWithJsonSchema,
} from '@agent/core';
import { bodyProperty, buildArgumentsSchema } from './arguments-schema.js';
import { authFor, type ResolvedAuth } from './auth.js';
import { resolveBaseUrl } from './base-url.js';
import { credentialHeaderNames, fetchScoped, originOf } from './credential-scope.js';
import { fetchFailure } from './document-source.js';
import {
  declaresIdempotencyKey,
  idempotencyKeyFor,
  idempotencyKeyHeader,
  isIdempotentMethod,
} from './idempotency.js';
import type {
  NormalizedDocument,
  NormalizedOperation,
  NormalizedParameter,
} from './normalized-types.js';
import type { OpenApiArguments, OpenApiTool, OpenApiToolOptions } from './openapi-tool-adapter.js';
import type { OpenApiOperationInfo } from './operation-filter.js';
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

/** Redirects out of the API into a private network are refused (redirect-guard.ts). */
const redirectGuard = createRedirectGuard();
// QUERY (OpenAPI 3.2, the HTTP QUERY method) is safe: a read whose question is in its body.
const readOnlyMethods = new Set(['GET', 'HEAD', 'OPTIONS', 'QUERY']);

/** What {@link createOperationTool} needs besides the operation. */
export interface CreateToolParams {
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

/** The tool that calls `params.operation`. */
export function createOperationTool(params: CreateToolParams): OpenApiTool {
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

/** What include/exclude selectors and the `permission` option see of an operation. */
export function operationInfo(operation: NormalizedOperation): OpenApiOperationInfo {
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
