/**
 * Form and multipart bodies exactly as the document's `encoding` says (OpenAPI 3.x): per field,
 * `style` (form, spaceDelimited, pipeDelimited, deepObject), `explode` and `contentType`. Without
 * an entry a field takes the defaults the specification gives: style form, explode true; in a
 * multipart body an object is a JSON part.
 */
import { type JsonSchema, ToolError } from '@agent/core';
import { isFileSchema } from './arguments-schema.js';
import { joinDelimited, joiningDelimiter, UnsendableValueError } from './delimited-values.js';
import type { FieldEncoding } from './normalized-types.js';
import { ownEntry } from './own-property.js';
import { isRecord } from './spec-reader.js';

type Pair = [string, string];

function scalarText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value) ?? '';
}

function isJsonType(contentType: string): boolean {
  const base = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return base === 'application/json' || base.endsWith('+json');
}

/** `name[key][0]=…`: objects by key and arrays by index, all the way down (Stripe's convention). */
function deepPairs(prefix: string, value: unknown, out: Pair[]): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      deepPairs(`${prefix}[${index}]`, item, out);
    });
  } else if (isRecord(value)) {
    for (const [key, item] of Object.entries(value)) deepPairs(`${prefix}[${key}]`, item, out);
  } else {
    out.push([prefix, scalarText(value)]);
  }
}

/**
 * The name/value pairs of one form field, before percent-encoding. Throws
 * {@link UnsendableValueError} for a value its style cannot carry.
 */
export function formFieldPairs(
  name: string,
  value: unknown,
  encoding: FieldEncoding | undefined,
): Pair[] {
  if (value === undefined || value === null) return [];
  const contentType = encoding?.contentType;
  if (contentType !== undefined && !contentType.toLowerCase().startsWith('text/plain')) {
    return [[name, isJsonType(contentType) ? JSON.stringify(value) : scalarText(value)]];
  }
  const style = encoding?.style ?? 'form';
  const explode = encoding?.explode ?? style === 'form';
  const pairs: Pair[] = [];
  if (style === 'deepObject' && (isRecord(value) || Array.isArray(value))) {
    deepPairs(name, value, pairs);
    return pairs;
  }
  const delimiter = joiningDelimiter(style, explode);
  if (Array.isArray(value)) {
    const items = value.filter((item) => item !== undefined && item !== null).map(scalarText);
    // Percent-encoding comes later, for the whole value: the delimiter stays itself here.
    if (explode) return items.map((item) => [name, item]);
    // The whole value is percent-encoded later: a "," inside an item would read as a delimiter.
    return [[name, joinDelimited(items, delimiter ?? ',', (text) => text)]];
  }
  if (isRecord(value)) {
    const entries = Object.entries(value).filter(([, item]) => item !== undefined && item !== null);
    if (explode) return entries.map(([key, item]) => [key, scalarText(item)]);
    const texts = entries.flatMap(([key, item]) => [key, scalarText(item)]);
    return [[name, joinDelimited(texts, delimiter ?? ',', (text) => text)]];
  }
  return [[name, scalarText(value)]];
}

/**
 * A query or form value under `allowReserved`: RFC 3986's reserved characters stay as they are,
 * except those a query cannot hold or a form decoder reads as structure (OpenAPI 3.1.1, appendix
 * E): `#` would end the URL's query there (and drop every parameter after it, API keys
 * included), `&` would start another parameter the model chose (`q=a&api_key=…`), `+` would be
 * read as a space, and `[` `]` are not allowed in a query at all.
 */
export function encodeReserved(text: string): string {
  return encodeURIComponent(text).replace(/%(3A|2F|3F|40|21|24|27|28|29|2A|2C|3B|3D)/gi, (match) =>
    decodeURIComponent(match),
  );
}

/** An `application/x-www-form-urlencoded` body. */
export function formBody(
  value: unknown,
  encoding: Record<string, FieldEncoding>,
  toolName: string,
): string {
  if (!isRecord(value)) {
    throw ToolError.invalidArguments(
      toolName,
      'at "body": a form body must be an object of fields',
    );
  }
  const parts: string[] = [];
  for (const [field, item] of Object.entries(value)) {
    const fieldEncoding = ownEntry(encoding, field);
    const encodeValue = fieldEncoding?.allowReserved === true ? encodeReserved : encodeURIComponent;
    try {
      for (const [name, text] of formFieldPairs(field, item, fieldEncoding)) {
        parts.push(`${encodeURIComponent(name)}=${encodeValue(text)}`);
      }
    } catch (error) {
      if (error instanceof UnsendableValueError)
        throw ToolError.invalidArguments(toolName, `at "body.${field}": ${error.message}`);
      // Percent-encoding text with a lone UTF-16 surrogate throws this bare error.
      if (error instanceof URIError)
        throw ToolError.invalidArguments(
          toolName,
          `at "body.${field}": the value holds a lone UTF-16 surrogate (half of a character), which has no UTF-8 form to send`,
        );
      throw error;
    }
  }
  return parts.join('&');
}

/** A `multipart/form-data` body: files as file parts, objects as JSON parts unless encoded otherwise. */
export function multipartBody(
  value: unknown,
  schema: JsonSchema | undefined,
  encoding: Record<string, FieldEncoding>,
  toolName: string,
): FormData {
  if (!isRecord(value)) {
    throw ToolError.invalidArguments(
      toolName,
      'at "body": a multipart body must be an object of fields',
    );
  }
  const form = new FormData();
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined || item === null) continue;
    const file = isFileSchema(ownEntry(schema?.properties, key));
    const declared = ownEntry(encoding, key)?.contentType;
    const append = (element: unknown) => {
      if (file) {
        form.append(
          key,
          new Blob([scalarText(element)], declared === undefined ? {} : { type: declared }),
          key,
        );
        return;
      }
      const type = declared ?? (isRecord(element) ? 'application/json' : undefined);
      if (type === undefined || type.toLowerCase().startsWith('text/plain')) {
        form.append(key, scalarText(element));
      } else {
        const text = isJsonType(type) ? JSON.stringify(element) : scalarText(element);
        form.append(key, new Blob([text], { type }), key);
      }
    };
    if (Array.isArray(item)) for (const element of item) append(element);
    else append(item);
  }
  return form;
}
