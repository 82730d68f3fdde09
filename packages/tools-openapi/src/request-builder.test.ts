import { describe, expect, it } from 'vitest';
import type { NormalizedParameter } from './normalized-types.js';
import { matchesOperation } from './operation-filter.js';
import { pathValue, queryPairs } from './request-builder.js';

function parameter(overrides: Partial<NormalizedParameter>): NormalizedParameter {
  return {
    name: 'id',
    in: 'query',
    required: false,
    description: undefined,
    deprecated: false,
    schema: {},
    schemaPointer: '#',
    style: 'form',
    explode: true,
    allowReserved: false,
    contentType: undefined,
    pointer: '#',
    ...overrides,
  };
}

describe('query serialisation', () => {
  it('follows style and explode for arrays and objects', () => {
    const array = [3, 'a b', true];
    expect(queryPairs(parameter({}), array)).toEqual(['id=3', 'id=a%20b', 'id=true']);
    expect(queryPairs(parameter({ explode: false }), array)).toEqual(['id=3,a%20b,true']);
    expect(
      queryPairs(parameter({ style: 'spaceDelimited', explode: false }), [3, 'ab', true]),
    ).toEqual(['id=3%20ab%20true']);
    expect(queryPairs(parameter({ style: 'pipeDelimited', explode: false }), array)).toEqual([
      'id=3%7Ca%20b%7Ctrue',
    ]);
    expect(queryPairs(parameter({ style: 'tabDelimited', explode: false }), [1, 2])).toEqual([
      'id=1%092',
    ]);
    expect(queryPairs(parameter({}), [])).toEqual([]);
    const object = { role: 'admin', first: 'Al&Co' };
    expect(queryPairs(parameter({}), object)).toEqual(['role=admin', 'first=Al%26Co']);
    expect(queryPairs(parameter({ explode: false }), object)).toEqual([
      'id=role,admin,first,Al%26Co',
    ]);
    expect(queryPairs(parameter({ style: 'deepObject' }), { a: { b: 1 }, c: [1, 2] })).toEqual([
      'id[a][b]=1',
      'id[c]=1',
      'id[c]=2',
    ]);
  });

  it('encodes everything but keeps reserved characters for allowReserved, and sends content parameters as JSON', () => {
    expect(queryPairs(parameter({ name: 'q x' }), 'a/b?c=d')).toEqual(['q%20x=a%2Fb%3Fc%3Dd']);
    expect(queryPairs(parameter({ allowReserved: true }), 'a/b?c=d')).toEqual(['id=a/b?c=d']);
    expect(queryPairs(parameter({ contentType: 'application/json' }), { a: 1 })).toEqual([
      'id=%7B%22a%22%3A1%7D',
    ]);
  });
});

describe('path serialisation', () => {
  const path = (overrides: Partial<NormalizedParameter>) =>
    parameter({ in: 'path', style: 'simple', explode: false, ...overrides });
  it('handles simple, label and matrix styles', () => {
    expect(pathValue(path({}), 'a/b c')).toBe('a%2Fb%20c');
    expect(pathValue(path({}), [1, 2])).toBe('1,2');
    expect(pathValue(path({}), { a: 1, b: 2 })).toBe('a,1,b,2');
    expect(pathValue(path({ explode: true }), { a: 1, b: 2 })).toBe('a=1,b=2');
    expect(pathValue(path({ style: 'label' }), [1, 2])).toBe('.1,2');
    expect(pathValue(path({ style: 'label', explode: true }), [1, 2])).toBe('.1.2');
    expect(pathValue(path({ style: 'matrix' }), 5)).toBe(';id=5');
    expect(pathValue(path({ style: 'matrix', explode: true }), [1, 2])).toBe(';id=1;id=2');
    expect(pathValue(path({ style: 'matrix' }), { a: 1 })).toBe(';id=a,1');
  });
});

describe('operation selectors', () => {
  const operation = (operationId: string, method: 'GET' | 'DELETE', path: string) => ({
    method,
    path,
    operationId,
    summary: undefined,
    tags: [],
    deprecated: false,
    pointer: '#',
  });
  it('reads an operationId with "/" as an operationId, and "METHOD /path" only with a space', () => {
    const repoGet = operation('repos/get', 'GET', '/repos/{owner}/{repo}');
    expect(matchesOperation(repoGet, 'repos/get')).toBe(true);
    expect(matchesOperation(repoGet, 'repos/*')).toBe(true);
    expect(matchesOperation(operation('repos/delete', 'DELETE', '/get'), 'repos/get')).toBe(false);
    expect(matchesOperation(repoGet, 'GET /repos/**')).toBe(true);
    expect(matchesOperation(repoGet, 'DELETE /repos/**')).toBe(false);
    expect(matchesOperation(repoGet, '/repos/{owner}/*')).toBe(true);
  });
});
