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

/** Issues spelled out in one message; the rest are counted. */
const maxShownIssues = 20;

/**
 * `at "limit": expected number, received string "50"`; issues joined by `; `, the first 20 of
 * them (an array of 100,000 wrong items gave a 5 MB message, sent whole to the model).
 */
export function formatValidationIssues(issues: readonly ValidationIssue[]): string {
  const shown = issues
    .slice(0, maxShownIssues)
    .map((issue) => `at "${formatIssuePath(issue.path)}": ${issue.message}`)
    .join('; ');
  const more = issues.length - maxShownIssues;
  return more > 0 ? `${shown}; and ${more} more ${more === 1 ? 'issue' : 'issues'}` : shown;
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
