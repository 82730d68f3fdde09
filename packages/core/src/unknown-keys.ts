import type * as z from 'zod';
import type { ValidationIssue } from './tool.js';

/** One key a zod object would strip: where the object is, the key, and the keys it knows. */
interface UnknownKey {
  path: readonly (string | number)[];
  key: string;
  known: readonly string[];
}

/** The parts of a zod v4 definition the walk reads (zod's own types are per schema kind). */
interface WalkedDefinition {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  getter?: () => z.ZodType;
  element?: z.ZodType;
  items?: readonly z.ZodType[];
  rest?: z.ZodType | null;
  valueType?: z.ZodType;
  options?: readonly z.ZodType[];
  left?: z.ZodType;
  right?: z.ZodType;
}

const definitionOf = (schema: z.ZodType) => schema._zod.def as unknown as WalkedDefinition;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

// Wrappers whose inner schema sees the same value.
const wrappers = new Set([
  'optional',
  'nullable',
  'default',
  'prefault',
  'readonly',
  'catch',
  'nonoptional',
  'success',
]);

/**
 * Keys of `value` that a zod schema would drop without a word: a plain `z.object` strips keys it
 * does not know, so a model that sends `"glob"` where the tool expects `"include"` would get a
 * call that silently ignores it. Walks the schema the way zod parses (a union by its first option
 * that accepts the value, a pipe by its input side); objects with a catch-all (`z.looseObject`,
 * `.catchall`) keep extra keys and `z.strictObject` reports them itself, so neither is reported.
 */
export function unknownKeyIssues(schema: z.ZodType, value: unknown): ValidationIssue[] {
  return unknownKeys(schema, value, []).map(({ path, key, known }) => ({
    path,
    message:
      known.length === 0
        ? `unknown field "${key}" (this object takes no fields)`
        : `unknown field "${key}" (known fields: ${known.join(', ')})`,
  }));
}

function unknownKeys(
  schema: z.ZodType,
  value: unknown,
  path: readonly (string | number)[],
): UnknownKey[] {
  // Only an object (or an array holding one) can carry a key: a string, number, boolean or null
  // has none, whatever schema it meets — the common case, decided without walking.
  if (value === null || typeof value !== 'object') return [];
  const definition = definitionOf(schema);
  const { type } = definition;
  if (wrappers.has(type) && definition.innerType !== undefined)
    return unknownKeys(definition.innerType, value, path);
  switch (type) {
    case 'object':
      return objectKeys(definition, value, path);
    case 'pipe':
      return definition.in === undefined ? [] : unknownKeys(definition.in, value, path);
    case 'lazy':
      return definition.getter === undefined ? [] : unknownKeys(definition.getter(), value, path);
    case 'array': {
      const { element } = definition;
      if (!Array.isArray(value) || element === undefined) return [];
      return value.flatMap((item, index) => unknownKeys(element, item, [...path, index]));
    }
    case 'tuple': {
      if (!Array.isArray(value)) return [];
      const items = definition.items ?? [];
      return value.flatMap((item, index) => {
        const itemSchema = items[index] ?? definition.rest ?? undefined;
        return itemSchema === undefined ? [] : unknownKeys(itemSchema, item, [...path, index]);
      });
    }
    case 'record': {
      const { valueType } = definition;
      if (!isRecord(value) || valueType === undefined) return [];
      return Object.entries(value).flatMap(([key, item]) =>
        unknownKeys(valueType, item, [...path, key]),
      );
    }
    case 'union': {
      // zod takes the first option that accepts the value; that option decides what is dropped.
      const chosen = (definition.options ?? []).find((option) => option.safeParse(value).success);
      return chosen === undefined ? [] : unknownKeys(chosen, value, path);
    }
    case 'intersection': {
      if (definition.left === undefined || definition.right === undefined) return [];
      // A key one side does not know the other may: only a key neither knows is dropped.
      const left = unknownKeys(definition.left, value, path);
      const right = unknownKeys(definition.right, value, path);
      const id = (entry: UnknownKey) => JSON.stringify([entry.path, entry.key]);
      const inRight = new Map(right.map((entry) => [id(entry), entry]));
      return left.flatMap((entry) => {
        const other = inRight.get(id(entry));
        return other === undefined
          ? []
          : [{ ...entry, known: [...new Set([...entry.known, ...other.known])] }];
      });
    }
    default:
      return [];
  }
}

function objectKeys(
  definition: WalkedDefinition,
  value: unknown,
  path: readonly (string | number)[],
): UnknownKey[] {
  if (!isRecord(value)) return [];
  const shape = definition.shape ?? {};
  const found: UnknownKey[] = [];
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const item = value[key];
    const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
    // A field holding no object has no keys to check: skip the walk (and its path copy).
    const nested = item !== null && typeof item === 'object';
    if (field !== undefined) {
      if (nested) found.push(...unknownKeys(field, item, [...path, key]));
    } else if (definition.catchall !== undefined) {
      // A catch-all keeps the key (and a `never` one makes zod report it): walk into it.
      if (nested) found.push(...unknownKeys(definition.catchall, item, [...path, key]));
    } else {
      found.push({ path, key, known: Object.keys(shape) });
    }
  }
  return found;
}
