// The one shape every OpenAPI version (Swagger 2.0, 3.0, 3.1, 3.2) is read into.
import type { SpecDialect, SpecReader } from './spec-reader.js';

/**
 * HTTP methods an OpenAPI path item can hold as fields, in the order the specification lists
 * them (`query`, the safe method with a body, since OpenAPI 3.2).
 */
export const httpMethods = [
  'get',
  'put',
  'post',
  'delete',
  'options',
  'head',
  'patch',
  'trace',
  'query',
] as const;

/** A lower-case HTTP method a path item names as a field. */
export type HttpMethod = (typeof httpMethods)[number];

/**
 * A lower-case HTTP method of an operation: one of the fields, or another token from OpenAPI
 * 3.2's `additionalOperations` (`purge`, `link`…).
 */
export type OperationMethod = HttpMethod | (string & {});

/**
 * Where a parameter goes in the request; `querystring` (OpenAPI 3.2) is the whole query string
 * as one value, serialised by its media type.
 */
export type ParameterLocation = 'path' | 'query' | 'querystring' | 'header' | 'cookie';

/** How an array or object parameter is written (OpenAPI `style`, plus Swagger 2.0's `tsv`). */
export type SerializationStyle =
  | 'simple'
  | 'label'
  | 'matrix'
  | 'form'
  | 'spaceDelimited'
  | 'pipeDelimited'
  | 'tabDelimited'
  | 'deepObject';

/** A parameter of any dialect, with its serialisation made explicit. */
export interface NormalizedParameter {
  name: string;
  in: ParameterLocation;
  required: boolean;
  description: string | undefined;
  deprecated: boolean;
  /** The raw (unconverted) schema. */
  schema: unknown;
  schemaPointer: string;
  style: SerializationStyle;
  explode: boolean;
  allowReserved: boolean;
  /** Set when the parameter is described by `content`: the value is sent as JSON text. */
  contentType: string | undefined;
  pointer: string;
}

/** How a request body is encoded. */
export type BodyKind = 'json' | 'form' | 'multipart' | 'text' | 'binary';

/** The request body the tool sends, with the one media type chosen for it. */
export interface NormalizedBody {
  required: boolean;
  mediaType: string;
  kind: BodyKind;
  description: string | undefined;
  /** The raw schema (undefined when the document gives none). */
  schema: unknown;
  schemaPointer: string;
  /** Per-field encoding of a form or multipart body (OpenAPI 3's `encoding`), by field name. */
  encoding: Record<string, FieldEncoding>;
}

/** How one field of a form or multipart body is serialised. */
export interface FieldEncoding {
  /** `form` (the default), `spaceDelimited`, `pipeDelimited` or `deepObject`. */
  style: string | undefined;
  explode: boolean | undefined;
  /** A media type for the field: its value is sent as that (JSON text for `application/json`). */
  contentType: string | undefined;
  allowReserved: boolean;
}

/** A server URL template with its variables. */
export interface NormalizedServer {
  url: string;
  variables: Record<string, { default: string; enum?: readonly string[] }>;
}

/** A security scheme, reduced to what a client needs to attach credentials. */
export type NormalizedSecurityScheme =
  | { type: 'http'; scheme: string }
  | {
      type: 'apiKey';
      in: 'header' | 'query' | 'cookie';
      name: string;
      /** Where the document declares it, for errors. */
      pointer: string;
    }
  | { type: 'oauth2' }
  | { type: 'openIdConnect' }
  | { type: 'other' };

/** One operation of any dialect, everything resolved that the tool needs. */
export interface NormalizedOperation {
  method: OperationMethod;
  path: string;
  pointer: string;
  operationId: string | undefined;
  summary: string | undefined;
  description: string | undefined;
  tags: string[];
  deprecated: boolean;
  parameters: NormalizedParameter[];
  body: NormalizedBody | undefined;
  /** Media types of the success responses, for `Accept`. */
  responseMediaTypes: string[];
  /** `description` of each declared response, by status (`404`, `4XX`, `default`). */
  responseDescriptions: Record<string, string>;
  /**
   * The schema of the first success (2xx) response that declares one (unresolved), and where it
   * is; read only to tell `tool_search` what the operation returns.
   */
  successSchema: { value: unknown; pointer: string } | undefined;
  /** Effective security requirements; undefined when the document says nothing. */
  security: Record<string, unknown>[] | undefined;
  servers: NormalizedServer[];
}

/** A whole document in one shape, whatever its dialect. */
export interface NormalizedDocument {
  dialect: SpecDialect;
  reader: SpecReader;
  title: string | undefined;
  apiVersion: string | undefined;
  servers: NormalizedServer[];
  securitySchemes: Record<string, NormalizedSecurityScheme>;
  operations: NormalizedOperation[];
}
