/**
 * Turns the validator's output (one unit per failed keyword, wrappers included) into the issues
 * a model can act on, worded like zod tools' issues: `at "limit": expected number, received
 * string "50" (hint: …)`.
 */
import type { OutputUnit } from '@cfworker/json-schema';
import { linearFormatMeaning } from './json-schema-patterns.js';
import type { ValidationIssue } from './tool.js';
import { describeReceived, typeMismatchHint } from './validation.js';

type Segment = string | number;

interface Unit {
  path: Segment[];
  /** The instance location, as given: a key for grouping. */
  at: string;
  keyword: string;
  /** The keyword location's segments (through `$ref`s as the validator followed them). */
  schemaPath: string[];
  error: string;
}

// Keywords that only say "something below failed"; their children carry the reason.
const wrappers = new Set([
  'properties',
  'items',
  'prefixItems',
  'additionalItems',
  '$ref',
  '$dynamicRef',
  '$recursiveRef',
  'allOf',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'patternProperties',
]);

function decode(segment: string): string {
  let text = segment.replaceAll('~1', '/').replaceAll('~0', '~');
  try {
    text = decodeURIComponent(text);
  } catch {
    // Not percent-encoded after all.
  }
  return text;
}

function segments(location: string): string[] {
  const body = location.startsWith('#') ? location.slice(1) : location;
  return body === '' ? [] : body.slice(1).split('/').map(decode);
}

/** Instance segments with array indexes as numbers (so paths print as `items[0].name`). */
function instancePath(location: string, root: unknown): Segment[] {
  const path: Segment[] = [];
  let node: unknown = root;
  for (const segment of segments(location)) {
    if (Array.isArray(node) && /^\d+$/.test(segment)) {
      path.push(Number(segment));
      node = node[Number(segment)];
    } else {
      path.push(segment);
      node =
        node !== null && typeof node === 'object'
          ? (node as Record<string, unknown>)[segment]
          : undefined;
    }
  }
  return path;
}

function valueAt(root: unknown, path: readonly Segment[]): unknown {
  let node = root;
  for (const segment of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[segment];
  }
  return node;
}

/** The schema node a keyword location points at, following `$ref`s the way the validator did. */
function schemaAt(schema: unknown, path: readonly string[]): unknown {
  let node = schema;
  for (const segment of path) {
    if (node === null || typeof node !== 'object') return undefined;
    const record = node as Record<string, unknown>;
    if (segment === '$ref' && typeof record.$ref === 'string' && record.$ref.startsWith('#')) {
      node = schemaAt(schema, segments(record.$ref));
    } else {
      node = record[segment];
    }
  }
  return node;
}

function startsWith(path: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= path.length && prefix.every((segment, index) => path[index] === segment);
}

function quoted(text: string): string | undefined {
  return /"([^"]*)"/.exec(text)?.[1];
}

function typeName(types: unknown): string {
  const list = Array.isArray(types) ? types : [types];
  return list.map(String).join(' or ');
}

/**
 * The issues for a failed validation. `schema` is the schema the validator ran (for limits and
 * expected types); `value` is the validated value (for what was received).
 */
export function describeOutputUnits(
  units: readonly OutputUnit[],
  schema: unknown,
  value: unknown,
): ValidationIssue[] {
  const parsed: Unit[] = units.map((unit) => ({
    path: instancePath(unit.instanceLocation, value),
    at: unit.instanceLocation,
    keyword: unit.keyword,
    schemaPath: segments(unit.keywordLocation),
    error: unit.error,
  }));
  const issues: ValidationIssue[] = [];
  const consumed = new Set<Unit>();
  const unknownFields = new Map<string, { path: Segment[]; names: string[] }>();
  const ownErrors = new Set(
    parsed
      .filter((unit) => !wrappers.has(unit.keyword) && unit.keyword !== 'false')
      .map((unit) => unit.at),
  );

  // Units whose children are summarised by the parent: alternatives and property names.
  for (const unit of parsed) {
    if (consumed.has(unit)) continue;
    if (unit.keyword === 'anyOf' || unit.keyword === 'oneOf' || unit.keyword === 'propertyNames') {
      for (const other of parsed) {
        if (other !== unit && startsWith(other.schemaPath, unit.schemaPath)) consumed.add(other);
      }
    }
  }

  for (const unit of parsed) {
    if (consumed.has(unit) || wrappers.has(unit.keyword)) continue;
    const received = valueAt(value, unit.path);
    const node = schemaAt(schema, unit.schemaPath.slice(0, -1)) as
      | Record<string, unknown>
      | undefined;
    const limit = node?.[unit.keyword];
    const add = (message: string, path: Segment[] = unit.path): void => {
      issues.push({ path, message });
    };
    switch (unit.keyword) {
      case 'type': {
        const expected = typeName(limit);
        add(
          `expected ${expected}, received ${describeReceived(received)}${typeMismatchHint(expected, received)}`,
        );
        break;
      }
      case 'required': {
        const name = quoted(unit.error) ?? '?';
        const property = (node?.properties as Record<string, { type?: unknown }> | undefined)?.[
          name
        ];
        const expected = property?.type !== undefined ? typeName(property.type) : 'field';
        add(`required ${expected} is missing`, [...unit.path, name]);
        break;
      }
      case 'additionalProperties':
      case 'unevaluatedProperties': {
        const name = quoted(unit.error);
        if (name === undefined) break;
        const fieldAt = `${unit.at}/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
        // A field that failed its own schema is not also "unknown" (an unevaluatedProperties quirk).
        if (unit.keyword === 'unevaluatedProperties' && ownErrors.has(fieldAt)) {
          markChildFalse(fieldAt);
          break;
        }
        if (limit === false) {
          const group = unknownFields.get(unit.at) ?? { path: unit.path, names: [] };
          group.names.push(name);
          unknownFields.set(unit.at, group);
          markChildFalse(fieldAt);
        }
        break;
      }
      case 'false':
        add('no value is allowed here');
        break;
      case 'enum':
        add(
          `expected one of ${(Array.isArray(limit) ? limit : []).map((v) => JSON.stringify(v)).join(', ')}, received ${describeReceived(received)}`,
        );
        break;
      case 'const':
        add(`expected ${JSON.stringify(limit)}, received ${describeReceived(received)}`);
        break;
      case 'anyOf':
      case 'oneOf':
        add(alternatives(unit, received));
        break;
      case 'propertyNames':
        add(`field name "${quoted(unit.error) ?? '?'}" is not allowed`);
        break;
      case 'minLength':
        add(`expected at least ${limit} characters, received ${describeReceived(received)}`);
        break;
      case 'maxLength':
        add(`expected at most ${limit} characters, received ${describeReceived(received)}`);
        break;
      case 'minimum':
        add(`expected a number >= ${limit}, received ${describeReceived(received)}`);
        break;
      case 'maximum':
        add(`expected a number <= ${limit}, received ${describeReceived(received)}`);
        break;
      case 'exclusiveMinimum':
        add(
          `expected a number > ${typeof limit === 'number' ? limit : node?.minimum}, received ${describeReceived(received)}`,
        );
        break;
      case 'exclusiveMaximum':
        add(
          `expected a number < ${typeof limit === 'number' ? limit : node?.maximum}, received ${describeReceived(received)}`,
        );
        break;
      case 'multipleOf':
        add(`expected a multiple of ${limit}, received ${describeReceived(received)}`);
        break;
      case 'pattern':
        add(`expected a string matching /${limit}/, received ${describeReceived(received)}`);
        break;
      case 'format': {
        const linear = typeof limit === 'string' ? linearFormatMeaning(limit) : undefined;
        if (linear !== undefined && 'pattern' in linear)
          add(
            `expected a string matching /${linear.pattern}/, received ${describeReceived(received)}`,
          );
        else
          add(
            `expected a ${linear?.format ?? limit} string, received ${describeReceived(received)}`,
          );
        break;
      }
      case 'minItems':
        add(`expected at least ${limit} items, received ${describeReceived(received)}`);
        break;
      case 'maxItems':
        add(`expected at most ${limit} items, received ${describeReceived(received)}`);
        break;
      case 'uniqueItems':
        add(`expected unique items: ${unit.error.replace(/\.$/, '')}`);
        break;
      case 'minProperties':
        add(`expected at least ${limit} fields`);
        break;
      case 'maxProperties':
        add(`expected at most ${limit} fields`);
        break;
      case 'dependentRequired':
      case 'dependencies': {
        const [present, missing] = [...unit.error.matchAll(/"([^"]*)"/g)].map((m) => m[1]);
        if (missing !== undefined) {
          add(`required when "${present}" is given, but missing`, [...unit.path, missing]);
        } else {
          add(unit.error);
        }
        break;
      }
      case 'not':
        add(`matches a shape that is not allowed, received ${describeReceived(received)}`);
        break;
      default:
        add(unit.error.replace(/\.$/, ''));
    }
  }
  for (const { path, names } of unknownFields.values()) {
    issues.push({
      path,
      message: `unknown field${names.length > 1 ? 's' : ''} ${names.map((n) => `"${n}"`).join(', ')}`,
    });
  }
  return dedupeIssues(issues.filter((issue) => issue.message !== ''));

  function markChildFalse(at: string): void {
    for (const other of parsed)
      if (other.keyword === 'false' && other.at === at) consumed.add(other);
  }

  function alternatives(unit: Unit, received: unknown): string {
    if (/\(([2-9]|\d{2,}) matches\)/.test(unit.error)) {
      return `matches more than one of the allowed shapes, received ${describeReceived(received)}`;
    }
    const reasons: string[] = [];
    for (const other of parsed) {
      if (other === unit || wrappers.has(other.keyword) || other.at !== unit.at) continue;
      if (!startsWith(other.schemaPath, unit.schemaPath)) continue;
      const node = schemaAt(schema, other.schemaPath.slice(0, -1)) as
        | Record<string, unknown>
        | undefined;
      const limit = node?.[other.keyword];
      reasons.push(
        other.keyword === 'type'
          ? `expected ${typeName(limit)}`
          : other.keyword === 'enum' && Array.isArray(limit)
            ? `expected one of ${limit.map((v) => JSON.stringify(v)).join(', ')}`
            : `${other.keyword} ${JSON.stringify(limit)}`,
      );
    }
    const unique = [...new Set(reasons)];
    const detail = unique.length > 0 && unique.length <= 6 ? ` (${unique.join(' | ')})` : '';
    return `matches none of the allowed shapes${detail}, received ${describeReceived(received)}`;
  }
}

function dedupeIssues(issues: ValidationIssue[]): ValidationIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${JSON.stringify(issue.path)} ${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
