import type { ValidationIssue } from './tool.js';

/** `limit`, `items[0].name`; the root is `(root)`. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

/** `at "limit": expected number, received string "50"`; issues joined by `; `. */
export function formatValidationIssues(issues: readonly ValidationIssue[]): string {
  return issues.map((issue) => `at "${formatIssuePath(issue.path)}": ${issue.message}`).join('; ');
}

/** A short, typed description of a received value: `string "50"`, `number 3`, `array`, `nothing`. */
export function describeReceived(value: unknown): string {
  if (value === undefined) return 'nothing (the field is missing)';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `array of ${value.length}`;
  switch (typeof value) {
    case 'string':
      return `string ${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)}`;
    case 'number':
    case 'boolean':
    case 'bigint':
      return `${typeof value} ${String(value)}`;
    case 'object':
      return 'object';
    default:
      return typeof value;
  }
}

/** A hint for the usual mistakes: numbers or booleans sent as strings, JSON sent as a string. */
export function typeMismatchHint(expected: string, received: unknown): string {
  if (typeof received !== 'string') return '';
  const trimmed = received.trim();
  if (
    (expected === 'number' || expected === 'integer' || expected === 'int') &&
    trimmed !== '' &&
    Number.isFinite(Number(trimmed))
  ) {
    return ` (hint: send ${trimmed} as a number, without quotes)`;
  }
  if (expected === 'boolean' && (trimmed === 'true' || trimmed === 'false')) {
    return ` (hint: send ${trimmed} as a boolean, without quotes)`;
  }
  if (
    (expected === 'object' && trimmed.startsWith('{')) ||
    (expected === 'array' && trimmed.startsWith('['))
  ) {
    return ` (hint: send the ${expected} itself, not a JSON string)`;
  }
  return '';
}
