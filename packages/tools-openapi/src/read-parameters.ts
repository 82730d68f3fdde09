// Reading the parameters of a path item or an operation.
import { httpTokenProblem, isHttpToken } from './http-names.js';
import { childPointer } from './json-pointer.js';
import type {
  NormalizedParameter,
  ParameterLocation,
  SerializationStyle,
} from './normalized-types.js';
import { specError } from './spec-error.js';
import {
  describe,
  isRecord,
  type JsonRecord,
  type Located,
  type SpecReader,
  stringField,
  trimmedOrUndefined,
} from './spec-reader.js';
import { collectionFormatStyle, swaggerLocations, swaggerParameterSchema } from './swagger2.js';

const parameterLocations = new Set(['path', 'query', 'querystring', 'header', 'cookie']);

/** How a `querystring` parameter that names no media type is written. */
export const formMediaType = 'application/x-www-form-urlencoded';

/** The parameters of a path item or operation, each dereferenced and checked for a name and location. */
export function readParameterList(
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
    // `Headers` would throw a TypeError naming neither the parameter nor the document when the
    // tool is called; a cookie with such a name would be split by the server into others.
    if ((location === 'header' || location === 'cookie') && !isHttpToken(name))
      specError(located.pointer, `the ${location} parameter's name ${httpTokenProblem(name)}`);
    return located;
  });
}

/** One parameter in the normalised shape (Swagger 2.0 or OpenAPI 3). */
export function readParameter(
  reader: SpecReader,
  located: Located<JsonRecord>,
): NormalizedParameter {
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
  // The whole query string is written by its media type (OpenAPI 3.2 requires `content`; a
  // bare `schema` is read as a form).
  if (location === 'querystring' && contentType === undefined) contentType = formMediaType;
  const defaultStyle: SerializationStyle =
    location === 'query' || location === 'querystring' || location === 'cookie' ? 'form' : 'simple';
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
