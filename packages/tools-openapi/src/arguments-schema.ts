import type { JsonSchema, JsonSchemaObject } from '@agent/core';
import type {
  NormalizedOperation,
  NormalizedParameter,
  ParameterLocation,
} from './normalized-types.js';
import {
  clipDescription,
  convertSchema,
  type SchemaBudget,
  type SchemaConvertLimits,
} from './schema-convert.js';
import type { SpecReader } from './spec-reader.js';
import { sanitizePropertyName } from './tool-name.js';

/** Which argument property feeds which parameter. */
export interface ParameterBinding {
  property: string;
  parameter: NormalizedParameter;
}

/** The arguments schema of one operation and how to map arguments back to the request. */
export interface OperationArguments {
  schema: JsonSchemaObject;
  bindings: ParameterBinding[];
  /** Whether the schema has the `body` property. */
  hasBody: boolean;
}

/** Options of {@link buildArgumentsSchema}. */
export interface ArgumentsSchemaOptions {
  reader: SpecReader;
  limits: SchemaConvertLimits;
  /** The document's budget of converted schema nodes. */
  budget?: SchemaBudget | undefined;
  /** Parameters the client fills itself (credentials, fixed headers): not asked of the model. */
  omitParameter: (parameter: NormalizedParameter) => boolean;
}

/** The property that carries the request body. */
export const bodyProperty = 'body';

const locationOrder: readonly ParameterLocation[] = [
  'path',
  'query',
  'querystring',
  'header',
  'cookie',
];
// Header parameters the client sets itself: per the OpenAPI specification Accept, Content-Type
// and Authorization are ignored; the others belong to the HTTP client (fetch refuses or
// overwrites them), so asking the model for them only makes calls fail.
const ignoredHeaders = new Set([
  'accept',
  'content-type',
  'authorization',
  'content-length',
  'host',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'accept-encoding',
  'proxy-authorization',
  'proxy-connection',
  'cookie',
]);

function clientOwnedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return ignoredHeaders.has(lower) || lower.startsWith('sec-') || lower.startsWith('proxy-');
}

/**
 * One flat object schema per operation: every path, query, header and cookie parameter is a
 * top-level property named after the parameter (made provider-safe), and the request body is
 * the `body` property, so a body field can never clash with a parameter. When two parameters
 * map to the same property name (`id` in path and query, a parameter called `body`), the later
 * one, in the order path, query, header, cookie, is prefixed with its location (`query_id`).
 */
export function buildArgumentsSchema(
  operation: NormalizedOperation,
  options: ArgumentsSchemaOptions,
): OperationArguments {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const bindings: ParameterBinding[] = [];
  const taken = new Set<string>(operation.body === undefined ? [] : [bodyProperty]);
  const ordered = [...operation.parameters].sort(
    (a, b) => locationOrder.indexOf(a.in) - locationOrder.indexOf(b.in),
  );
  for (const parameter of ordered) {
    if (parameter.in === 'header' && clientOwnedHeader(parameter.name)) continue;
    if (options.omitParameter(parameter)) continue;
    const base = sanitizePropertyName(parameter.name) ?? parameter.in;
    let property = base;
    if (taken.has(property)) property = sanitizePropertyName(`${parameter.in}_${base}`) ?? base;
    for (let suffix = 2; taken.has(property); suffix++) property = `${base.slice(0, 60)}_${suffix}`;
    taken.add(property);
    bindings.push({ property, parameter });
    const converted = convertSchema(parameter.schema, parameter.schemaPointer, {
      reader: options.reader,
      limits: options.limits,
      budget: options.budget,
    });
    const notes: string[] = [];
    if (parameter.deprecated) notes.push('Deprecated.');
    const description = parameter.description ?? converted.description;
    if (description !== undefined) notes.push(description);
    if (property !== parameter.name) notes.push(`(${parameter.in} parameter "${parameter.name}")`);
    if (parameter.in === 'querystring')
      notes.push(`The whole query string, written as ${parameter.contentType ?? 'a form'}.`);
    else if (parameter.contentType !== undefined) notes.push(`Sent as ${parameter.contentType}.`);
    const schema: JsonSchema = { ...converted };
    // A path parameter is a non-empty segment: say so where the model reads the schema.
    if (parameter.in === 'path' && schema.type === 'string' && schema.minLength === undefined)
      schema.minLength = 1;
    if (notes.length > 0)
      schema.description = clipDescription(notes.join(' '), options.limits.maxDescriptionChars);
    properties[property] = schema;
    if (parameter.required) required.push(property);
  }

  const body = operation.body;
  if (body !== undefined) {
    let schema: JsonSchema =
      body.schema === undefined
        ? {}
        : convertSchema(body.schema, body.schemaPointer, {
            reader: options.reader,
            limits: options.limits,
            budget: options.budget,
          });
    const described = body.description ?? schema.description;
    let description: string;
    switch (body.kind) {
      case 'json':
        description = described ?? 'The JSON request body.';
        break;
      case 'form':
      case 'multipart':
        if (schema.type === undefined && schema.properties === undefined)
          schema = { ...schema, type: 'object' };
        if (body.kind === 'multipart') schema = describeFileFields(schema);
        description = `${described ?? 'The request body'} (sent as ${body.mediaType}).`;
        break;
      case 'text':
      case 'binary':
        if (schema.type !== 'string') schema = { type: 'string' };
        description = `${described ?? 'The request body'} (sent as ${body.mediaType}, as text).`;
        break;
      default: {
        const exhaustive: never = body.kind;
        throw new Error(`Unknown body kind ${String(exhaustive)}`);
      }
    }
    properties[bodyProperty] = {
      ...schema,
      description: clipDescription(description, options.limits.maxDescriptionChars),
    };
    if (body.required) required.push(bodyProperty);
  }

  return {
    schema: {
      type: 'object',
      properties,
      ...(required.length > 0 ? { required } : {}),
      additionalProperties: false,
    },
    bindings,
    hasBody: body !== undefined,
  };
}

function describeFileFields(schema: JsonSchema): JsonSchema {
  if (schema.properties === undefined) return schema;
  // Built with fromEntries: a field may be named `__proto__` (assignment would lose it).
  const properties = Object.fromEntries(
    Object.entries(schema.properties).map(([name, property]): [string, JsonSchema] => [
      name,
      isFileSchema(property)
        ? {
            ...property,
            description: `${property.description ?? 'A file'} (give the file content as text; it is sent as a file part).`,
          }
        : property,
    ]),
  );
  return { ...schema, properties };
}

/** Whether a schema describes file content (`format: binary`, or a `contentMediaType`). */
export function isFileSchema(schema: JsonSchema | undefined): boolean {
  if (schema === undefined) return false;
  if (schema.format === 'binary' || schema.contentMediaType !== undefined) return true;
  return schema.type === 'array' && !Array.isArray(schema.items) && isFileSchema(schema.items);
}
