// What only Swagger 2.0 has: servers from host/basePath/schemes, collectionFormat, schema
// keywords inline on parameters, and bodies as `in: body` / `formData` parameters.
import { childPointer } from './json-pointer.js';
import { chooseMediaType } from './media-types.js';
import type {
  NormalizedBody,
  NormalizedServer,
  ParameterLocation,
  SerializationStyle,
} from './normalized-types.js';
import { setOwn } from './own-property.js';
import { type JsonRecord, type Located, stringField, trimmedOrUndefined } from './spec-reader.js';

/** Where a Swagger 2.0 parameter may be. */
export const swaggerLocations = new Set(['path', 'query', 'header', 'body', 'formData']);

/** The servers of a Swagger 2.0 document (one, from `host`, `basePath` and `schemes`). */
export function swaggerServers(document: JsonRecord): NormalizedServer[] {
  const written = stringField(document, 'host')?.trim();
  const basePath = stringField(document, 'basePath') ?? '';
  if (written === undefined || written === '')
    return [{ url: basePath === '' ? '/' : basePath, variables: {} }];
  // `host` is a name and port, but documents in the wild write a URL there (`https://api.x.com/`):
  // its scheme is the one meant, and its slash would double the base path's.
  const withScheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(written);
  const host = written.slice(withScheme?.[0].length ?? 0).replace(/\/+$/, '');
  const schemes = Array.isArray(document.schemes) ? document.schemes.map(String) : [];
  // Prefer https when both are offered; a document that lists none is served where it was fetched from (see fromUrl).
  const scheme =
    withScheme?.[1]?.toLowerCase() ??
    (schemes.includes('https') ? 'https' : (schemes[0] ?? 'https'));
  return [{ url: `${scheme}://${host}${basePath}`, variables: {} }];
}

/** The OpenAPI 3 style and explode of a Swagger 2.0 `collectionFormat`. */
export function collectionFormatStyle(
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
export function swaggerParameterSchema(parameter: JsonRecord): JsonRecord {
  const schema: JsonRecord = {};
  for (const key of swaggerSchemaKeys)
    if (parameter[key] !== undefined) schema[key] = parameter[key];
  return schema;
}

/** A Swagger 2.0 operation's body: its `in: body` parameter, or its `formData` parameters as one form. */
export function swaggerBody(
  params: { operation: JsonRecord; document: JsonRecord; pointer: string },
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
    setOwn(properties, name, schema);
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
