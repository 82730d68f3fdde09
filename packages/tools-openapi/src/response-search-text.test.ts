import { toToolDefinition } from '@agent/core';
import { describe, expect, it } from 'vitest';
import {
  type OpenApiDocument,
  OpenApiToolAdapter,
  type OpenApiToolOptions,
} from './openapi-tool-adapter.js';
import { maxResponseSearchChars } from './response-search-text.js';

const quiet: OpenApiToolOptions = { onWarning: () => undefined };

function openapi(paths: Record<string, unknown>, components: Record<string, unknown> = {}) {
  return {
    openapi: '3.0.3',
    info: { title: 'Test API', version: '1' },
    servers: [{ url: 'http://127.0.0.1:1/api' }],
    paths,
    components,
  };
}

function json(schema: unknown) {
  return { description: 'OK', content: { 'application/json': { schema } } };
}

/** The search text of the one tool a document gives. */
function searchTextOf(document: OpenApiDocument): string | undefined {
  const [tool] = OpenApiToolAdapter.fromSpec(document, quiet).tools;
  if (tool === undefined) throw new Error('no tool');
  return tool.searchText;
}

const worklogs = {
  Worklog: {
    type: 'object',
    properties: {
      author: { $ref: '#/components/schemas/User' },
      timeSpent: { type: 'string', description: 'The time spent working on the issue.' },
      started: { type: 'string' },
    },
  },
  User: {
    type: 'object',
    properties: { accountId: { type: 'string' }, displayName: { type: 'string' } },
  },
  Page: {
    type: 'object',
    properties: {
      total: { type: 'integer' },
      worklogs: { type: 'array', items: { $ref: '#/components/schemas/Worklog' } },
    },
  },
};

describe('a read operation’s search text: what it returns', () => {
  it('names the fields two levels deep through $refs, arrays and shared responses, breadth first', () => {
    const text = searchTextOf(
      openapi(
        {
          '/issues/{id}/worklog': {
            get: {
              operationId: 'getIssueWorklog',
              responses: { '200': { $ref: '#/components/responses/Page' } },
            },
          },
        },
        {
          schemas: worklogs,
          responses: { Page: json({ $ref: '#/components/schemas/Page' }) },
        },
      ),
    );
    // `worklogs` is an array: its items' fields are the second level; the author's are a third.
    expect(text?.split('\n')).toEqual(['total', 'worklogs', 'author', 'timeSpent', 'started']);
  });

  it('reads Swagger 2.0 response schemas too', () => {
    const text = searchTextOf({
      swagger: '2.0',
      info: { title: 'Test API', version: '1' },
      host: '127.0.0.1:1',
      paths: {
        '/users/presence': {
          get: {
            operationId: 'users_getPresence',
            responses: { '200': { description: 'OK', schema: { $ref: '#/definitions/Presence' } } },
          },
        },
      },
      definitions: {
        Presence: {
          type: 'object',
          properties: { presence: { type: 'string' }, online: { type: 'boolean' } },
        },
      },
    });
    expect(text).toBe('presence\nonline');
  });

  it('takes the first success response with a schema, and its JSON media type', () => {
    const text = searchTextOf(
      openapi({
        '/balance': {
          get: {
            responses: {
              '400': json({ type: 'object', properties: { error: {} } }),
              '200': {
                description: 'OK',
                content: {
                  'application/xml': { schema: { type: 'object', properties: { xml: {} } } },
                  'application/vnd.api+json': {
                    schema: { type: 'object', properties: { month_to_date_balance: {} } },
                  },
                },
              },
              '201': json({ type: 'object', properties: { later: {} } }),
            },
          },
        },
      }),
    );
    expect(text).toBe('month_to_date_balance');
  });

  it('merges allOf/oneOf/anyOf branches as one object, and stops on cycles', () => {
    const text = searchTextOf(
      openapi(
        {
          '/comments/{id}': {
            get: { responses: { '200': json({ $ref: '#/components/schemas/Comment' }) } },
          },
        },
        {
          schemas: {
            Comment: {
              allOf: [
                { $ref: '#/components/schemas/Base' },
                {
                  type: 'object',
                  properties: {
                    body: { type: 'string' },
                    replies: { type: 'array', items: { $ref: '#/components/schemas/Comment' } },
                    parent: { $ref: '#/components/schemas/Comment' },
                  },
                },
              ],
            },
            Base: { type: 'object', properties: { id: {}, created_at: {} } },
            Loop: { $ref: '#/components/schemas/Loop' },
          },
        },
      ),
    );
    // The Comment under `replies` and `parent` has been read already: no second copy of its fields.
    expect(text?.split('\n')).toEqual(['id', 'created_at', 'body', 'replies', 'parent']);
  });

  it.each([
    ['a dangling reference', { $ref: '#/components/schemas/Missing' }],
    ['a circular reference', { $ref: '#/components/schemas/Loop' }],
    ['an external reference', { $ref: 'other.yaml#/Thing' }],
    ['a schema that is not an object', 'string'],
    ['a boolean schema', true],
    ['an object without properties', { type: 'object', additionalProperties: true }],
  ])('%s in the response schema loads the tool, with no search text', (_what, schema) => {
    const document = openapi(
      { '/things': { get: { operationId: 'things', responses: { '200': json(schema) } } } },
      { schemas: { Loop: { $ref: '#/components/schemas/Loop' } } },
    );
    expect(searchTextOf(document)).toBeUndefined();
  });

  it('a bad reference below the first level only ends that branch', () => {
    const text = searchTextOf(
      openapi({
        '/things': {
          get: {
            responses: {
              '200': json({
                type: 'object',
                properties: {
                  broken: { $ref: '#/nowhere' },
                  fine: { type: 'object', properties: { leaf: {} } },
                },
              }),
            },
          },
        },
      }),
    );
    expect(text?.split('\n')).toEqual(['broken', 'fine', 'leaf']);
  });

  it('is bounded: whole names, at most the limit, 60 properties per object', () => {
    const properties = Object.fromEntries(
      Array.from({ length: 500 }, (_, at) => [
        `field_number_${at}`,
        { type: 'object', properties: { inner: {} } },
      ]),
    );
    const text = searchTextOf(
      openapi({ '/big': { get: { responses: { '200': json({ type: 'object', properties }) } } } }),
    );
    const names = text?.split('\n') ?? [];
    expect(text?.length).toBeLessThanOrEqual(maxResponseSearchChars);
    expect(names.slice(0, 60)).toEqual(Array.from({ length: 60 }, (_, at) => `field_number_${at}`));
    expect(names).not.toContain('field_number_60');
    expect(names.every((name) => /^(field_number_\d+|inner)$/.test(name))).toBe(true);
  });

  it.each(['post', 'put', 'patch', 'delete'])(
    'a %s operation has none (it returns what it wrote)',
    (method) => {
      const document = openapi({
        '/things': {
          [method]: { responses: { '200': json({ type: 'object', properties: { thing: {} } }) } },
        },
      });
      expect(searchTextOf(document)).toBeUndefined();
    },
  );

  it('none without a success response or its schema', () => {
    for (const responses of [
      { '404': json({ type: 'object', properties: { error: {} } }) },
      { default: json({ type: 'object', properties: { error: {} } }) },
      { '204': { description: 'No content' } },
    ])
      expect(searchTextOf(openapi({ '/things': { get: { responses } } }))).toBeUndefined();
  });

  it('never reaches the model: the tool’s definition and schema are what they were', () => {
    const document = openapi({
      '/users/{id}/presence': {
        get: {
          operationId: 'getPresence',
          summary: 'Gets presence',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': json({ type: 'object', properties: { presenceOnlineStatus: {} } }) },
        },
      },
    });
    const [tool] = OpenApiToolAdapter.fromSpec(document, quiet).tools;
    expect(tool?.searchText).toBe('presenceOnlineStatus');
    const definition = toToolDefinition(tool as NonNullable<typeof tool>);
    expect(Object.keys(definition).sort()).toEqual(['description', 'name', 'parameters']);
    expect(JSON.stringify(definition)).not.toContain('presenceOnlineStatus');
  });
});
