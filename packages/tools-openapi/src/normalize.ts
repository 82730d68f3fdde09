import { childPointer } from './json-pointer.js';
import { specError } from './spec-error.js';
import {
  describe,
  isRecord,
  type JsonRecord,
  type Located,
  type SpecDialect,
  SpecReader,
  stringField,
} from './spec-reader.js';

/** HTTP methods an OpenAPI path item can hold, in the order the specification lists them. */
export const httpMethods = [
  'get',
  'put',
  'post',
  'delete',
  'options',
  'head',
  'patch',
  'trace',
] as const;

/** A lower-case HTTP method of an operation. */
export type HttpMethod = (typeof httpMethods)[number];

/** Where a parameter goes in the request. */
export type ParameterLocation = 'path' | 'query' | 'header' | 'cookie';

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
  | { type: 'apiKey'; in: 'header' | 'query' | 'cookie'; name: string }
  | { type: 'oauth2' }
  | { type: 'openIdConnect' }
  | { type: 'other' };

/** One operation of any dialect, everything resolved that the tool needs. */
export interface NormalizedOperation {
  method: HttpMethod;
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

/** Options of {@link normalizeDocument}. */
export interface NormalizeOptions {
  warn: (message: string) => void;
}

/** Detects the dialect of a parsed document and rewrites it into one shape; throws `OpenApiSpecError`. */
export function normalizeDocument(
  document: unknown,
  options: NormalizeOptions,
): NormalizedDocument {
  if (!isRecord(document))
    specError('#', `the document must be an object, found ${describe(document)}`);
  const dialect = detectDialect(document, options.warn);
  const reader = new SpecReader(document, dialect);
  const info = isRecord(document.info) ? document.info : {};
  const servers =
    dialect === '2.0' ? swaggerServers(document) : readServers(document.servers, '#/servers');
  const securitySchemes = readSecuritySchemes(reader);
  const rootSecurity = readSecurity(document.security, '#/security');
  const operations: NormalizedOperation[] = [];
  const paths = document.paths;
  if (paths === undefined) {
    if (dialect !== '3.1') specError('#', 'the document has no "paths" object');
    options.warn('The document has no "paths": no operations, no tools.');
  } else {
    if (!isRecord(paths))
      specError('#/paths', `"paths" must be an object, found ${describe(paths)}`);
    for (const [path, rawItem] of Object.entries(paths)) {
      if (path.startsWith('x-')) continue;
      const itemPointer = childPointer('#/paths', path);
      if (!path.startsWith('/')) specError(itemPointer, `path "${path}" must start with "/"`);
      const item = reader.derefObject(rawItem, itemPointer, 'a path item');
      const pathServers =
        item.value.servers === undefined
          ? servers
          : readServers(item.value.servers, childPointer(item.pointer, 'servers'));
      const shared = readParameterList(
        reader,
        item.value.parameters,
        childPointer(item.pointer, 'parameters'),
      );
      for (const [key, rawOperation] of Object.entries(item.value)) {
        const method = key.toLowerCase();
        if (!isHttpMethod(method)) continue;
        const pointer = childPointer(item.pointer, key);
        if (!isRecord(rawOperation))
          specError(pointer, `an operation must be an object, found ${describe(rawOperation)}`);
        operations.push(
          readOperation({
            reader,
            document,
            method,
            path,
            pointer,
            operation: rawOperation,
            sharedParameters: shared,
            servers: pathServers,
            rootSecurity,
            warn: options.warn,
          }),
        );
      }
    }
  }
  return {
    dialect,
    reader,
    title: stringField(info, 'title'),
    apiVersion: stringField(info, 'version'),
    servers,
    securitySchemes,
    operations,
  };
}

function detectDialect(document: JsonRecord, warn: (message: string) => void): SpecDialect {
  if (document.swagger !== undefined) {
    // An unquoted `swagger: 2.0` in YAML is the number 2.
    if (String(document.swagger) !== '2.0' && document.swagger !== 2)
      specError(
        '#/swagger',
        `unsupported Swagger version "${String(document.swagger)}": only 2.0 is supported`,
      );
    return '2.0';
  }
  const version = document.openapi;
  if (version === undefined)
    specError('#', 'not an OpenAPI document: it has neither an "openapi" nor a "swagger" field');
  // An unquoted `openapi: 3.0` in YAML is the number 3.
  const text =
    typeof version === 'number' && Number.isInteger(version) ? version.toFixed(1) : String(version);
  if (/^3\.0(\.|$)/.test(text)) return '3.0';
  if (/^3\.1(\.|$)/.test(text)) return '3.1';
  if (/^3\.\d+(\.|$)/.test(text)) {
    warn(`OpenAPI ${text} is read as OpenAPI 3.1; features newer than 3.1 are ignored.`);
    return '3.1';
  }
  return specError(
    '#/openapi',
    `unsupported OpenAPI version "${text}": 3.0, 3.1 and Swagger 2.0 are supported`,
  );
}

function isHttpMethod(value: string): value is HttpMethod {
  return (httpMethods as readonly string[]).includes(value);
}

function readServers(value: unknown, pointer: string): NormalizedServer[] {
  if (value === undefined) return [{ url: '/', variables: {} }];
  if (!Array.isArray(value))
    specError(pointer, `"servers" must be an array, found ${describe(value)}`);
  if (value.length === 0) return [{ url: '/', variables: {} }];
  return value.map((server, index) => {
    const at = childPointer(pointer, index);
    if (!isRecord(server) || typeof server.url !== 'string')
      specError(at, 'a server must be an object with a "url" string');
    const variables: NormalizedServer['variables'] = {};
    if (isRecord(server.variables)) {
      for (const [name, variable] of Object.entries(server.variables)) {
        if (!isRecord(variable) || variable.default === undefined)
          specError(childPointer(at, 'variables', name), 'a server variable needs a "default"');
        const values = Array.isArray(variable.enum) ? variable.enum.map(String) : undefined;
        variables[name] = {
          default: String(variable.default),
          ...(values === undefined ? {} : { enum: values }),
        };
      }
    }
    return { url: server.url, variables };
  });
}

function swaggerServers(document: JsonRecord): NormalizedServer[] {
  const host = stringField(document, 'host');
  const basePath = stringField(document, 'basePath') ?? '';
  if (host === undefined) return [{ url: basePath === '' ? '/' : basePath, variables: {} }];
  const schemes = Array.isArray(document.schemes) ? document.schemes.map(String) : [];
  // Prefer https when both are offered; a document that lists none is served where it was fetched from (see fromUrl).
  const scheme = schemes.includes('https') ? 'https' : (schemes[0] ?? 'https');
  return [{ url: `${scheme}://${host}${basePath}`, variables: {} }];
}

function readSecuritySchemes(reader: SpecReader): Record<string, NormalizedSecurityScheme> {
  const document = reader.root;
  const base =
    reader.dialect === '2.0'
      ? { value: document.securityDefinitions, pointer: '#/securityDefinitions' }
      : {
          value: isRecord(document.components) ? document.components.securitySchemes : undefined,
          pointer: '#/components/securitySchemes',
        };
  const out: Record<string, NormalizedSecurityScheme> = {};
  if (!isRecord(base.value)) return out;
  for (const [name, raw] of Object.entries(base.value)) {
    const scheme = reader.derefObject(
      raw,
      childPointer(base.pointer, name),
      'a security scheme',
    ).value;
    const type = stringField(scheme, 'type');
    if (type === 'apiKey') {
      const location = stringField(scheme, 'in');
      const keyName = stringField(scheme, 'name');
      if (
        (location === 'header' || location === 'query' || location === 'cookie') &&
        keyName !== undefined
      )
        out[name] = { type: 'apiKey', in: location, name: keyName };
      else
        specError(
          childPointer(base.pointer, name),
          'an apiKey security scheme needs "in" (header, query or cookie) and "name"',
        );
    } else if (type === 'http') {
      out[name] = { type: 'http', scheme: (stringField(scheme, 'scheme') ?? '').toLowerCase() };
    } else if (type === 'basic') {
      out[name] = { type: 'http', scheme: 'basic' };
    } else if (type === 'oauth2') {
      out[name] = { type: 'oauth2' };
    } else if (type === 'openIdConnect') {
      out[name] = { type: 'openIdConnect' };
    } else {
      out[name] = { type: 'other' };
    }
  }
  return out;
}

function readSecurity(value: unknown, pointer: string): Record<string, unknown>[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every(isRecord))
    specError(pointer, '"security" must be an array of security requirement objects');
  return value;
}

interface ReadOperationParams {
  reader: SpecReader;
  document: JsonRecord;
  method: HttpMethod;
  path: string;
  pointer: string;
  operation: JsonRecord;
  sharedParameters: Located<JsonRecord>[];
  servers: NormalizedServer[];
  rootSecurity: Record<string, unknown>[] | undefined;
  warn: (message: string) => void;
}

function readOperation(params: ReadOperationParams): NormalizedOperation {
  const { reader, operation, pointer, method, path, warn } = params;
  const own = readParameterList(reader, operation.parameters, childPointer(pointer, 'parameters'));
  // Operation-level parameters override path-level ones with the same name and location.
  const merged = new Map<string, Located<JsonRecord>>();
  for (const parameter of [...params.sharedParameters, ...own]) {
    merged.set(`${String(parameter.value.in)}:${String(parameter.value.name)}`, parameter);
  }
  const operationId = stringField(operation, 'operationId');
  const label = `${method.toUpperCase()} ${path}`;
  const parameters: NormalizedParameter[] = [];
  const bodyParameters: Located<JsonRecord>[] = [];
  const formParameters: Located<JsonRecord>[] = [];
  for (const parameter of merged.values()) {
    const location = parameter.value.in;
    if (reader.dialect === '2.0' && location === 'body') bodyParameters.push(parameter);
    else if (reader.dialect === '2.0' && location === 'formData') formParameters.push(parameter);
    else parameters.push(readParameter(reader, parameter));
  }

  // Every `{name}` of the path template must be filled; a missing declaration is a common slip.
  const templateNames = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? '');
  for (const name of templateNames) {
    if (!parameters.some((parameter) => parameter.in === 'path' && parameter.name === name)) {
      warn(`${label}: path parameter "${name}" is not declared; it is added as a required string.`);
      parameters.push({
        name,
        in: 'path',
        required: true,
        description: undefined,
        deprecated: false,
        schema: { type: 'string' },
        schemaPointer: pointer,
        style: 'simple',
        explode: false,
        allowReserved: false,
        contentType: undefined,
        pointer,
      });
    }
  }
  const kept = parameters.filter((parameter) => {
    if (parameter.in !== 'path' || templateNames.includes(parameter.name)) return true;
    warn(
      `${label}: path parameter "${parameter.name}" is not in the path template; it is ignored.`,
    );
    return false;
  });

  let body: NormalizedBody | undefined;
  if (reader.dialect === '2.0') {
    body = swaggerBody(params, bodyParameters, formParameters);
  } else if (operation.requestBody !== undefined) {
    body = readRequestBody(
      reader,
      operation.requestBody,
      childPointer(pointer, 'requestBody'),
      label,
      warn,
    );
  }

  if (body !== undefined && (method === 'get' || method === 'head')) {
    warn(
      `${label}: fetch cannot send a request body with ${method.toUpperCase()}; the body is ignored.`,
    );
    body = undefined;
  }

  const responses = readResponses(params);
  return {
    method,
    path,
    pointer,
    operationId,
    summary: trimmedOrUndefined(stringField(operation, 'summary')),
    description: trimmedOrUndefined(stringField(operation, 'description')),
    tags: Array.isArray(operation.tags)
      ? operation.tags.filter((tag) => typeof tag === 'string')
      : [],
    deprecated: operation.deprecated === true,
    parameters: kept,
    body,
    responseMediaTypes: responses.mediaTypes,
    responseDescriptions: responses.descriptions,
    security:
      operation.security === undefined
        ? params.rootSecurity
        : readSecurity(operation.security, childPointer(pointer, 'security')),
    servers:
      reader.dialect !== '2.0' && operation.servers !== undefined
        ? readServers(operation.servers, childPointer(pointer, 'servers'))
        : params.servers,
  };
}

function trimmedOrUndefined(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

const parameterLocations = new Set(['path', 'query', 'header', 'cookie']);
const swaggerLocations = new Set(['path', 'query', 'header', 'body', 'formData']);

function readParameterList(
  reader: SpecReader,
  value: unknown,
  pointer: string,
): Located<JsonRecord>[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    specError(pointer, `"parameters" must be an array, found ${describe(value)}`);
  return value.map((raw, index) => {
    const located = reader.derefObject(raw, childPointer(pointer, index), 'a parameter');
    const { name, in: location } = located.value;
    if (typeof name !== 'string' || name === '')
      specError(located.pointer, 'a parameter needs a non-empty "name"');
    const allowed = reader.dialect === '2.0' ? swaggerLocations : parameterLocations;
    if (typeof location !== 'string' || !allowed.has(location))
      specError(
        located.pointer,
        `parameter "${name}" has "in": ${JSON.stringify(location)}; expected one of ${[...allowed].join(', ')}`,
      );
    return located;
  });
}

function readParameter(reader: SpecReader, located: Located<JsonRecord>): NormalizedParameter {
  const { value: parameter, pointer } = located;
  const name = String(parameter.name);
  const location = parameter.in as ParameterLocation;
  const description = trimmedOrUndefined(stringField(parameter, 'description'));
  if (reader.dialect === '2.0') {
    const format = stringField(parameter, 'collectionFormat') ?? 'csv';
    const { style, explode } = collectionFormatStyle(format, location);
    return {
      name,
      in: location,
      required: location === 'path' || parameter.required === true,
      description,
      deprecated: false,
      schema: swaggerParameterSchema(parameter),
      schemaPointer: pointer,
      style,
      explode,
      allowReserved: false,
      contentType: undefined,
      pointer,
    };
  }
  let schema: unknown = parameter.schema;
  let schemaPointer = childPointer(pointer, 'schema');
  let contentType: string | undefined;
  if (schema === undefined && isRecord(parameter.content)) {
    const [mediaType, media] = Object.entries(parameter.content)[0] ?? [];
    if (mediaType !== undefined) {
      contentType = mediaType;
      schema = isRecord(media) ? media.schema : undefined;
      schemaPointer = childPointer(pointer, 'content', mediaType, 'schema');
    }
  }
  const defaultStyle: SerializationStyle =
    location === 'query' || location === 'cookie' ? 'form' : 'simple';
  const style = (stringField(parameter, 'style') ?? defaultStyle) as SerializationStyle;
  return {
    name,
    in: location,
    required: location === 'path' || parameter.required === true,
    description,
    deprecated: parameter.deprecated === true,
    schema: schema ?? {},
    schemaPointer,
    style,
    explode: typeof parameter.explode === 'boolean' ? parameter.explode : style === 'form',
    allowReserved: parameter.allowReserved === true,
    contentType,
    pointer,
  };
}

function collectionFormatStyle(
  format: string,
  location: ParameterLocation,
): { style: SerializationStyle; explode: boolean } {
  switch (format) {
    case 'multi':
      return { style: 'form', explode: true };
    case 'ssv':
      return { style: 'spaceDelimited', explode: false };
    case 'tsv':
      return { style: 'tabDelimited', explode: false };
    case 'pipes':
      return { style: 'pipeDelimited', explode: false };
    default:
      return { style: location === 'query' ? 'form' : 'simple', explode: false };
  }
}

const swaggerSchemaKeys = [
  'type',
  'format',
  'items',
  'enum',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'x-nullable',
];

// A Swagger 2.0 non-body parameter carries its schema keywords inline.
function swaggerParameterSchema(parameter: JsonRecord): JsonRecord {
  const schema: JsonRecord = {};
  for (const key of swaggerSchemaKeys)
    if (parameter[key] !== undefined) schema[key] = parameter[key];
  return schema;
}

function swaggerBody(
  params: ReadOperationParams,
  bodyParameters: Located<JsonRecord>[],
  formParameters: Located<JsonRecord>[],
): NormalizedBody | undefined {
  const { operation, document, pointer } = params;
  const consumes = (
    Array.isArray(operation.consumes) ? operation.consumes : document.consumes
  ) as unknown;
  const types = Array.isArray(consumes) ? consumes.map(String) : [];
  const [bodyParameter] = bodyParameters;
  if (bodyParameter !== undefined) {
    const choice = chooseMediaType(types.length > 0 ? types : ['application/json']);
    return {
      required: bodyParameter.value.required === true,
      mediaType: choice.mediaType,
      kind: choice.kind,
      description: trimmedOrUndefined(stringField(bodyParameter.value, 'description')),
      schema: bodyParameter.value.schema,
      schemaPointer: childPointer(bodyParameter.pointer, 'schema'),
      encoding: {},
    };
  }
  if (formParameters.length === 0) return undefined;
  const hasFile = formParameters.some((parameter) => parameter.value.type === 'file');
  const multipart =
    hasFile || types.some((type) => type.toLowerCase().startsWith('multipart/form-data'));
  const properties: JsonRecord = {};
  const required: string[] = [];
  for (const { value } of formParameters) {
    const name = String(value.name);
    const schema = swaggerParameterSchema(value);
    const description = stringField(value, 'description');
    if (description !== undefined) schema.description = description;
    properties[name] = schema;
    if (value.required === true) required.push(name);
  }
  return {
    required: required.length > 0,
    mediaType: multipart ? 'multipart/form-data' : 'application/x-www-form-urlencoded',
    kind: multipart ? 'multipart' : 'form',
    description: undefined,
    schema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}) },
    schemaPointer: childPointer(pointer, 'parameters'),
    // Swagger 2's collectionFormat "multi" is form-explode; other formats join with commas.
    encoding: {},
  };
}

function readRequestBody(
  reader: SpecReader,
  value: unknown,
  pointer: string,
  label: string,
  warn: (message: string) => void,
): NormalizedBody | undefined {
  const located = reader.derefObject(value, pointer, 'a request body');
  const content = located.value.content;
  if (!isRecord(content)) specError(located.pointer, 'a request body needs a "content" object');
  const types = Object.keys(content);
  if (types.length === 0) {
    warn(`${label}: the request body lists no media type; it is ignored.`);
    return undefined;
  }
  const choice = chooseMediaType(types);
  const mediaPointer = childPointer(located.pointer, 'content', choice.mediaType);
  const media = reader.deref(content[choice.mediaType], mediaPointer).value;
  return {
    required: located.value.required === true,
    mediaType:
      choice.mediaType === '*/*' || choice.mediaType === 'application/*'
        ? 'application/json'
        : choice.mediaType,
    kind: choice.kind,
    description: trimmedOrUndefined(stringField(located.value, 'description')),
    schema: isRecord(media) ? media.schema : undefined,
    schemaPointer: childPointer(mediaPointer, 'schema'),
    encoding: readEncoding(isRecord(media) ? media.encoding : undefined),
  };
}

function readEncoding(value: unknown): Record<string, FieldEncoding> {
  const encoding: Record<string, FieldEncoding> = {};
  if (!isRecord(value)) return encoding;
  for (const [field, entry] of Object.entries(value)) {
    if (!isRecord(entry)) continue;
    encoding[field] = {
      style: typeof entry.style === 'string' ? entry.style : undefined,
      explode: typeof entry.explode === 'boolean' ? entry.explode : undefined,
      contentType: typeof entry.contentType === 'string' ? entry.contentType : undefined,
      allowReserved: entry.allowReserved === true,
    };
  }
  return encoding;
}

/** Whether a media type is JSON (`application/json`, `application/merge-patch+json`, `…+json;charset=…`). */
export function isJsonMediaType(mediaType: string): boolean {
  const base = baseMediaType(mediaType);
  return base === 'application/json' || base.endsWith('+json') || base === 'text/json';
}

/** A media type without parameters, lower-cased. */
export function baseMediaType(mediaType: string): string {
  return (mediaType.split(';')[0] ?? '').trim().toLowerCase();
}

/** Whether a media type is text a model can read. */
export function isTextMediaType(mediaType: string): boolean {
  const base = baseMediaType(mediaType);
  return (
    base.startsWith('text/') ||
    isJsonMediaType(base) ||
    base.endsWith('+xml') ||
    base.endsWith('+yaml') ||
    [
      'application/xml',
      'application/yaml',
      'application/x-yaml',
      'application/javascript',
      'application/ecmascript',
      'application/x-www-form-urlencoded',
      'application/graphql',
      'application/sql',
      'application/x-ndjson',
      'application/jsonl',
      'application/csv',
    ].includes(base)
  );
}

// JSON first (the model writes it best), then forms, then text, then whatever is left.
function chooseMediaType(types: readonly string[]): { mediaType: string; kind: BodyKind } {
  const rank = (type: string): number => {
    const base = baseMediaType(type);
    if (base === 'application/json') return 0;
    if (isJsonMediaType(base)) return 1;
    if (base === '*/*' || base === 'application/*') return 2;
    if (base === 'application/x-www-form-urlencoded') return 3;
    if (base === 'multipart/form-data') return 4;
    if (isTextMediaType(base)) return 5;
    return 6;
  };
  const [best] = [...types].sort((a, b) => rank(a) - rank(b));
  const mediaType = best ?? 'application/json';
  const score = rank(mediaType);
  const kind: BodyKind =
    score <= 2
      ? 'json'
      : score === 3
        ? 'form'
        : score === 4
          ? 'multipart'
          : score === 5
            ? 'text'
            : 'binary';
  return { mediaType, kind };
}

function readResponses(params: ReadOperationParams): {
  mediaTypes: string[];
  descriptions: Record<string, string>;
} {
  const { reader, operation, pointer, document } = params;
  const descriptions: Record<string, string> = {};
  const success: string[] = [];
  const fallback: string[] = [];
  const responses = operation.responses;
  if (isRecord(responses)) {
    for (const [status, raw] of Object.entries(responses)) {
      if (status.startsWith('x-')) continue;
      const response = reader.deref(raw, childPointer(pointer, 'responses', status)).value;
      if (!isRecord(response)) continue;
      const description = trimmedOrUndefined(stringField(response, 'description'));
      if (description !== undefined) descriptions[status] = description;
      if (reader.dialect === '2.0' || !isRecord(response.content)) continue;
      const types = Object.keys(response.content);
      if (status.startsWith('2')) success.push(...types);
      else if (status === 'default') fallback.push(...types);
    }
  }
  if (reader.dialect === '2.0') {
    const produces = Array.isArray(operation.produces) ? operation.produces : document.produces;
    return { mediaTypes: Array.isArray(produces) ? produces.map(String) : [], descriptions };
  }
  const mediaTypes = [...new Set(success.length > 0 ? success : fallback)];
  return { mediaTypes, descriptions };
}
