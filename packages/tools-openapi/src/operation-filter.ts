import type { HttpMethod } from './normalized-types.js';

/** What filters, names and permission callbacks see of an operation. */
export interface OpenApiOperationInfo {
  /**
   * Upper-case HTTP method, e.g. `GET`; `QUERY` and the methods of OpenAPI 3.2's
   * `additionalOperations` (`PURGE`…) too.
   */
  method: Uppercase<HttpMethod> | (string & {});
  /** The path template as written in the document, e.g. `/pets/{petId}`. */
  path: string;
  operationId: string | undefined;
  summary: string | undefined;
  tags: readonly string[];
  deprecated: boolean;
  /** JSON pointer of the operation in the document. */
  pointer: string;
}

/**
 * Picks operations: `'listPets'` or `'repos/*'` (operationId, `*` matches anything),
 * `'tag:pets'` (a tag, case-insensitive), `'GET /pets/*'` or `'* /pets/**'` or `'/pets/{petId}'`
 * (method and path template: `*` matches within one segment, `**` across segments), or a predicate.
 */
export type OperationSelector = string | ((operation: OpenApiOperationInfo) => boolean);

/** Whether an operation matches a selector (see {@link OperationSelector}). */
export function matchesOperation(
  operation: OpenApiOperationInfo,
  selector: OperationSelector,
): boolean {
  if (typeof selector === 'function') return selector(operation);
  const text = selector.trim();
  if (text.toLowerCase().startsWith('tag:')) {
    const tag = text.slice(4).trim().toLowerCase();
    return operation.tags.some((candidate) => candidate.toLowerCase() === tag);
  }
  // A route is `/path` or `METHOD /path` (a space between them): `repos/get` is an operationId.
  const route = /^(?:([A-Za-z]+|\*)\s+)?(\/.*)$/.exec(text);
  if (route !== null) {
    const method = route[1];
    if (method !== undefined && method !== '*' && method.toUpperCase() !== operation.method)
      return false;
    return pathGlob(route[2] ?? '').test(operation.path);
  }
  return operation.operationId !== undefined && wildcard(text).test(operation.operationId);
}

function pathGlob(glob: string): RegExp {
  let source = '';
  for (let index = 0; index < glob.length; index++) {
    const char = glob.charAt(index);
    if (char === '*' && glob.charAt(index + 1) === '*') {
      source += '.*';
      index++;
    } else if (char === '*') {
      source += '[^/]*';
    } else {
      source += escapeRegExp(char);
    }
  }
  return new RegExp(`^${source}$`);
}

function wildcard(text: string): RegExp {
  return new RegExp(`^${text.split('*').map(escapeRegExp).join('.*')}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
