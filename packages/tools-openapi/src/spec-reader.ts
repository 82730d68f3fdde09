import { pointerSegments, resolvePointer } from './json-pointer.js';
import { OpenApiSpecError, specError } from './spec-error.js';

/** Which flavour of document a spec is; schemas differ slightly between them. */
export type SpecDialect = '2.0' | '3.0' | '3.1';

/** A plain JSON object. */
export type JsonRecord = Record<string, unknown>;

/** Whether a value is a plain (non-array) object. */
export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value with the JSON pointer it was found at (after following `$ref`s). */
export interface Located<T = unknown> {
  value: T;
  pointer: string;
}

/** Reads one parsed document: follows local `$ref`s and refuses external ones with the place named. */
export class SpecReader {
  constructor(
    readonly root: JsonRecord,
    readonly dialect: SpecDialect,
  ) {}

  /** The target of a local reference found at `at`; throws a clear error for external or dangling refs. */
  resolveRef(ref: string, at: string): Located {
    if (pointerSegments(ref) === undefined) {
      if (ref.startsWith('#')) specError(at, `$ref "${ref}" is not a valid JSON pointer`);
      throw new OpenApiSpecError(
        `External $ref "${ref}" at ${at} is not supported: only local references ("#/...") are resolved. Bundle the document into one file first (e.g. \`redocly bundle\`).`,
        { pointer: at },
      );
    }
    const target = resolvePointer(this.root, ref);
    if (target === undefined) specError(at, `$ref "${ref}" points at nothing in the document`);
    return { value: target, pointer: ref };
  }

  /** Follows a chain of `$ref`s (a parameter, request body, response, path item…) to the object it names. */
  deref(value: unknown, pointer: string): Located {
    let current: Located = { value, pointer };
    const seen = new Set<string>();
    while (isRecord(current.value) && typeof current.value.$ref === 'string') {
      const ref = current.value.$ref;
      if (seen.has(ref)) specError(current.pointer, `circular $ref "${ref}"`);
      seen.add(ref);
      current = this.resolveRef(ref, `${current.pointer}/$ref`);
    }
    return current;
  }

  /** Like `deref`, and requires the result to be an object. */
  derefObject(value: unknown, pointer: string, what: string): Located<JsonRecord> {
    const located = this.deref(value, pointer);
    if (!isRecord(located.value))
      specError(located.pointer, `${what} must be an object, found ${describe(located.value)}`);
    return { value: located.value, pointer: located.pointer };
  }
}

/** `an array`, `a string "x"`, `null`… for error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `a string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `a ${typeof value}`;
}

/** The string trimmed, or undefined when it is absent or blank. */
export function trimmedOrUndefined(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

/** The string at `record[key]`, or undefined. */
export function stringField(record: JsonRecord, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' ? value : undefined;
}
