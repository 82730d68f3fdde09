// What a read operation returns, as words for `tool_search` (the tool's `searchText`): many
// requests are questions whose answer is a field of the response ("is alice online right now" →
// `users.getPresence`, which returns `presence` and `online`). Never sent to the model.
import { childPointer } from './json-pointer.js';
import { isRecord, type JsonRecord, type Located, type SpecReader } from './spec-reader.js';

/** The text stops growing at this many characters (whole names only). */
export const maxResponseSearchChars = 1200;

// Subschemas followed per combinator (`allOf`, `oneOf`, `anyOf`): a union of forty event types
// says little about any one of them.
const maxBranches = 4;
// Properties read per object: a response of 300 fields is cut at its first ones.
const maxProperties = 60;

/**
 * The property names of a success response's schema, two levels deep (an array's items count as
 * the array itself, and `allOf`/`oneOf`/`anyOf` branches as the object), breadth first so that a
 * long response keeps its top-level fields, one per line; `undefined` when the schema names
 * none. Names only: adding each property's description (its first sentence) was measured to
 * cost the evaluation's held-out requests and gain nothing elsewhere. Never throws: a reference
 * that does not resolve only ends that branch (the tool itself does not depend on this text).
 */
export function responseSearchText(
  reader: SpecReader,
  schema: Located | undefined,
  maxChars = maxResponseSearchChars,
): string | undefined {
  if (schema === undefined) return undefined;
  const names: string[] = [];
  let length = 0;
  const seen = new Set<string>();
  let level: Located[] = [schema];
  for (let depth = 0; depth < 2 && level.length > 0; depth++) {
    const next: Located[] = [];
    for (const object of level.flatMap((located) => objectSchemas(reader, located, seen))) {
      const properties = object.value.properties as JsonRecord;
      for (const [name, value] of Object.entries(properties).slice(0, maxProperties)) {
        if (length + name.length + 1 > maxChars) return names.join('\n');
        names.push(name);
        length += name.length + 1;
        next.push({ value, pointer: childPointer(object.pointer, 'properties', name) });
      }
    }
    level = next;
  }
  return names.length === 0 ? undefined : names.join('\n');
}

/** The object schemas a schema stands for: itself, its array items, its combinators' branches. */
function objectSchemas(
  reader: SpecReader,
  start: Located,
  seen: Set<string>,
): Located<JsonRecord>[] {
  const found: Located<JsonRecord>[] = [];
  const visit = (located: Located, hops: number): void => {
    if (hops > 4) return;
    const resolved = resolve(reader, located);
    if (resolved === undefined || !isRecord(resolved.value)) return;
    // A schema reached twice (a shared `User`, a recursive `Comment`) is read once.
    if (seen.has(resolved.pointer)) return;
    seen.add(resolved.pointer);
    const schema = resolved.value;
    if (isRecord(schema.properties)) found.push({ value: schema, pointer: resolved.pointer });
    if (schema.items !== undefined)
      visit({ value: schema.items, pointer: childPointer(resolved.pointer, 'items') }, hops + 1);
    for (const key of ['allOf', 'oneOf', 'anyOf'] as const) {
      const branches = schema[key];
      if (!Array.isArray(branches)) continue;
      branches.slice(0, maxBranches).forEach((branch, at) => {
        visit({ value: branch, pointer: childPointer(resolved.pointer, key, at) }, hops + 1);
      });
    }
  };
  visit(start, 0);
  return found;
}

function resolve(reader: SpecReader, located: Located): Located | undefined {
  try {
    return reader.deref(located.value, located.pointer);
  } catch {
    return undefined;
  }
}
