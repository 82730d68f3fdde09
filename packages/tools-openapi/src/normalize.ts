// Reading an OpenAPI document (Swagger 2.0, OpenAPI 3.0, 3.1 or 3.2) into the normalised shape:
// servers, security schemes, and every operation with its parameters, body and responses.
import { httpTokenProblem, isHttpToken } from './http-names.js';
import { childPointer } from './json-pointer.js';
import { chooseMediaType } from './media-types.js';
import {
  type FieldEncoding,
  type HttpMethod,
  httpMethods,
  type NormalizedBody,
  type NormalizedDocument,
  type NormalizedOperation,
  type NormalizedParameter,
  type NormalizedSecurityScheme,
  type NormalizedServer,
  type OperationMethod,
} from './normalized-types.js';
import { setOwn } from './own-property.js';
import { readParameter, readParameterList } from './read-parameters.js';
import { OpenApiSpecError, specError } from './spec-error.js';
import {
  describe,
  isRecord,
  type JsonRecord,
  type Located,
  type SpecDialect,
  SpecReader,
  stringField,
  trimmedOrUndefined,
} from './spec-reader.js';
import { swaggerBody, swaggerServers } from './swagger2.js';

/** Options of {@link normalizeDocument}. */
export interface NormalizeOptions {
  warn: (message: string) => void;
  /** Most operations read; one more is an `OpenApiSpecError` [{@link defaultMaxOperations}]. */
  maxOperations?: number | undefined;
}

/** Default of `maxOperations`: ten times the largest real document seen (Microsoft Graph). */
export const defaultMaxOperations = 100_000;

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
  const securitySchemes = readSecuritySchemes(reader, options.warn);
  const rootSecurity = readSecurity(document.security, '#/security');
  const operations: NormalizedOperation[] = [];
  const maxOperations = options.maxOperations ?? defaultMaxOperations;
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
      for (const { key, method, pointer, rawOperation } of pathItemOperations(
        item,
        dialect,
        options.warn,
      )) {
        if (!isRecord(rawOperation))
          specError(pointer, `an operation must be an object, found ${describe(rawOperation)}`);
        // Each costs memory whether it becomes a tool or not, and path items reused by `$ref`
        // multiply them: a document of kilobytes could hold millions.
        if (operations.length >= maxOperations) {
          // The path's own pointer: a reused path item's would name the same place every time.
          const at = childPointer(itemPointer, key);
          throw new OpenApiSpecError(
            `The OpenAPI document has more than ${maxOperations.toLocaleString('en-US')} operations (maxOperations; the next at ${at}): raise maxOperations to load it`,
            { pointer: at },
          );
        }
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
  // 3.2 is 3.1's schema dialect; what it adds that a call needs (the QUERY method,
  // `additionalOperations`, `in: querystring`) is read in every 3.x document.
  if (/^3\.[12](\.|$)/.test(text)) return '3.1';
  if (/^3\.\d+(\.|$)/.test(text)) {
    warn(`OpenAPI ${text} is read as OpenAPI 3.2; features newer than 3.2 are ignored.`);
    return '3.1';
  }
  return specError(
    '#/openapi',
    `unsupported OpenAPI version "${text}": 3.0, 3.1, 3.2 and Swagger 2.0 are supported`,
  );
}

function isHttpMethod(value: string): value is HttpMethod {
  return (httpMethods as readonly string[]).includes(value);
}

/** Methods `fetch` refuses to send (the Fetch standard's forbidden methods). */
const forbiddenMethods = new Set(['connect', 'trace', 'track']);

interface PathItemOperation {
  key: string;
  method: OperationMethod;
  pointer: string;
  rawOperation: unknown;
}

/**
 * The operations of a path item: its method fields, then OpenAPI 3.2's `additionalOperations`
 * (and the `x-oai-additionalOperations` extension that carries them in older documents), each
 * keyed by an HTTP method token (`PURGE`, `LINK`, `QUERY` before 3.2).
 */
function pathItemOperations(
  item: Located<JsonRecord>,
  dialect: SpecDialect,
  warn: (message: string) => void,
): PathItemOperation[] {
  const found: PathItemOperation[] = [];
  const path = item.pointer;
  for (const [key, rawOperation] of Object.entries(item.value)) {
    const method = key.toLowerCase();
    if (!isHttpMethod(method)) continue;
    // `query` is a field only since OpenAPI 3.2; Swagger 2.0 has no such method.
    if (method === 'query' && dialect === '2.0') continue;
    found.push({ key, method, pointer: childPointer(path, key), rawOperation });
  }
  if (dialect === '2.0') return found;
  for (const field of ['additionalOperations', 'x-oai-additionalOperations']) {
    const map = item.value[field];
    if (map === undefined) continue;
    const mapPointer = childPointer(path, field);
    if (!isRecord(map))
      specError(mapPointer, `"${field}" must be an object, found ${describe(map)}`);
    for (const [key, rawOperation] of Object.entries(map)) {
      const pointer = childPointer(mapPointer, key);
      if (!isHttpToken(key)) {
        warn(`${pointer}: "${key}" is not an HTTP method name; the operation is ignored.`);
        continue;
      }
      const method = key.toLowerCase();
      if (found.some((operation) => operation.method === method)) {
        warn(
          `${pointer}: the path item already has a ${key.toUpperCase()} operation; this one is ignored.`,
        );
        continue;
      }
      found.push({ key, method, pointer, rawOperation });
    }
  }
  return found.filter((operation) => {
    if (!forbiddenMethods.has(operation.method)) return true;
    warn(
      `${operation.pointer}: fetch cannot send ${operation.method.toUpperCase()} requests; the operation is ignored.`,
    );
    return false;
  });
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
        setOwn(variables, name, {
          default: String(variable.default),
          ...(values === undefined ? {} : { enum: values }),
        });
      }
    }
    return { url: server.url, variables };
  });
}

function readSecuritySchemes(
  reader: SpecReader,
  warn: (message: string) => void,
): Record<string, NormalizedSecurityScheme> {
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
    const pointer = childPointer(base.pointer, name);
    const scheme = reader.derefObject(raw, pointer, 'a security scheme').value;
    const type = stringField(scheme, 'type');
    if (type === 'apiKey') {
      const location = stringField(scheme, 'in');
      const keyName = stringField(scheme, 'name');
      if (
        (location === 'header' || location === 'query' || location === 'cookie') &&
        keyName !== undefined
      ) {
        setOwn(out, name, { type: 'apiKey', in: location, name: keyName, pointer });
        // Refused only where a key is configured for it (resolveAuth): a scheme nobody sends a
        // key through costs nothing, and real documents have such (`"name": "RapidAPI.com API Key"`).
        if (location !== 'query' && !isHttpToken(keyName))
          warn(
            `Security scheme "${name}": the ${location} name ${httpTokenProblem(keyName)}; an API key cannot be sent through it.`,
          );
      } else
        specError(
          pointer,
          'an apiKey security scheme needs "in" (header, query or cookie) and "name"',
        );
    } else if (type === 'http') {
      setOwn(out, name, {
        type: 'http',
        scheme: (stringField(scheme, 'scheme') ?? '').toLowerCase(),
      });
    } else if (type === 'basic') {
      setOwn(out, name, { type: 'http', scheme: 'basic' });
    } else if (type === 'oauth2') {
      setOwn(out, name, { type: 'oauth2' });
    } else if (type === 'openIdConnect') {
      setOwn(out, name, { type: 'openIdConnect' });
    } else {
      setOwn(out, name, { type: 'other' });
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
  method: OperationMethod;
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
  const templateNames = [...path.matchAll(/\{([^{}]+)\}/g)].map((match) => match[1] ?? '');
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
  const wholeQuery = parameters.filter((parameter) => parameter.in === 'querystring');
  const kept = parameters.filter((parameter) => {
    // The whole query string is one value: a second description of it cannot also be sent.
    if (parameter.in === 'querystring' && parameter !== wholeQuery[0]) {
      warn(
        `${label}: more than one querystring parameter; "${wholeQuery[0]?.name}" is the query string, "${parameter.name}" is ignored.`,
      );
      return false;
    }
    if (parameter.in !== 'path' || templateNames.includes(parameter.name)) return true;
    warn(
      `${label}: path parameter "${parameter.name}" is not in the path template; it is ignored.`,
    );
    return false;
  });

  let body: NormalizedBody | undefined;
  if (reader.dialect === '2.0') {
    // Swagger 2.0 allows one body parameter, and not beside formData ones: what is left out is said.
    const [first, ...extra] = bodyParameters;
    if (first !== undefined && extra.length > 0)
      warn(
        `${label}: ${bodyParameters.length} body parameters (Swagger 2.0 allows one); "${String(first.value.name)}" is the body, ${extra.map((parameter) => `"${String(parameter.value.name)}"`).join(', ')} ignored.`,
      );
    if (first !== undefined && formParameters.length > 0)
      warn(
        `${label}: a body parameter and formData parameters (Swagger 2.0 allows one or the other); "${String(first.value.name)}" is the body, the formData parameters ${formParameters.map((parameter) => `"${String(parameter.value.name)}"`).join(', ')} ignored.`,
      );
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
    successSchema: responses.successSchema,
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
    setOwn(encoding, field, {
      style: typeof entry.style === 'string' ? entry.style : undefined,
      explode: typeof entry.explode === 'boolean' ? entry.explode : undefined,
      contentType: typeof entry.contentType === 'string' ? entry.contentType : undefined,
      allowReserved: entry.allowReserved === true,
    });
  }
  return encoding;
}

function readResponses(params: ReadOperationParams): {
  mediaTypes: string[];
  descriptions: Record<string, string>;
  successSchema: Located | undefined;
} {
  const { reader, operation, pointer, document } = params;
  const descriptions: Record<string, string> = {};
  const success: string[] = [];
  const fallback: string[] = [];
  let successSchema: Located | undefined;
  const responses = operation.responses;
  if (isRecord(responses)) {
    for (const [status, raw] of Object.entries(responses)) {
      if (status.startsWith('x-')) continue;
      const located = reader.deref(raw, childPointer(pointer, 'responses', status));
      const response = located.value;
      if (!isRecord(response)) continue;
      const description = trimmedOrUndefined(stringField(response, 'description'));
      if (description !== undefined) descriptions[status] = description;
      if (successSchema === undefined && /^2/.test(status))
        successSchema = responseSchema(response, located.pointer, reader.dialect);
      if (reader.dialect === '2.0' || !isRecord(response.content)) continue;
      const types = Object.keys(response.content);
      if (status.startsWith('2')) success.push(...types);
      else if (status === 'default') fallback.push(...types);
    }
  }
  if (reader.dialect === '2.0') {
    const produces = Array.isArray(operation.produces) ? operation.produces : document.produces;
    return {
      mediaTypes: Array.isArray(produces) ? produces.map(String) : [],
      descriptions,
      successSchema,
    };
  }
  const mediaTypes = [...new Set(success.length > 0 ? success : fallback)];
  return { mediaTypes, descriptions, successSchema };
}

/**
 * The schema of a success response (unresolved), with where it is: Swagger 2.0's `schema`, or
 * OpenAPI 3's under a JSON media type (else the first one that has a schema).
 */
function responseSchema(
  response: JsonRecord,
  pointer: string,
  dialect: SpecDialect,
): Located | undefined {
  if (dialect === '2.0')
    return response.schema === undefined
      ? undefined
      : { value: response.schema, pointer: childPointer(pointer, 'schema') };
  const content = response.content;
  if (!isRecord(content)) return undefined;
  const types = Object.keys(content).filter(
    (type) => isRecord(content[type]) && (content[type] as JsonRecord).schema !== undefined,
  );
  const type = types.find((candidate) => /[/+]json\b/i.test(candidate)) ?? types[0];
  if (type === undefined) return undefined;
  return {
    value: (content[type] as JsonRecord).schema,
    pointer: childPointer(pointer, 'content', type, 'schema'),
  };
}
