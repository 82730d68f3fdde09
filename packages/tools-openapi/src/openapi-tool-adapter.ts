import { AgentError, type AgentTool, type PermissionTier, type ToolPolicy } from '@agent/core';
import type { OpenAPIV2, OpenAPIV3, OpenAPIV3_1 } from 'openapi-types';
import { type OpenApiAuth, resolveAuth } from './auth.js';
import { trustedOrigins } from './base-url.js';
import { defaultMaxDocumentBytes, fetchDocument, readDocumentFile } from './document-source.js';
import { httpTokenProblem, isHttpToken } from './http-names.js';
import { normalizeDocument } from './normalize.js';
import type { NormalizedDocument, NormalizedOperation } from './normalized-types.js';
import {
  matchesOperation,
  type OpenApiOperationInfo,
  type OperationSelector,
} from './operation-filter.js';
import { createOperationTool, operationInfo } from './operation-tool.js';
import { parseDocumentText } from './parse-document.js';
import type { OpenApiResultDetails } from './response-reader.js';
import type { SchemaBudget } from './schema-convert.js';
import { uniqueToolNames } from './tool-name.js';

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

function routeName(operation: NormalizedOperation): string {
  return `${operation.method}_${operation.path}`;
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
