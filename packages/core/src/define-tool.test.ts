import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineTool, validateWithZod, zodToJsonSchema } from './define-tool.js';
import { AgentError } from './errors.js';
import { inlineJsonSchema } from './json-schema.js';
import { formatValidationIssues } from './validation.js';

function issuesOf(schema: z.ZodType, value: unknown): string {
  const result = validateWithZod(schema, value);
  if (result.ok) throw new Error('expected a validation failure');
  return formatValidationIssues(result.issues);
}

describe('defineTool', () => {
  it('generates a self-contained JSON Schema: reused and registered sub-schemas inlined, no $schema', () => {
    const point = z
      .object({ x: z.number(), y: z.number() })
      .meta({ id: 'Point', description: 'a point' });
    const tool = defineTool({
      name: 'draw',
      description: 'draws',
      input: z.object({
        from: point,
        to: point,
        style: z.enum(['solid', 'dashed']).default('solid'),
        tags: z.array(z.string()).optional(),
      }),
      execute: async () => 'ok',
    });
    const text = JSON.stringify(tool.parameters);
    expect(text).not.toContain('$ref');
    expect(text).not.toContain('$schema');
    expect(text).not.toContain('$defs');
    expect(tool.parameters).toMatchObject({
      type: 'object',
      properties: {
        from: { type: 'object', properties: { x: { type: 'number' } } },
        to: { type: 'object', properties: { y: { type: 'number' } } },
        style: { enum: ['solid', 'dashed'], default: 'solid' },
      },
      required: ['from', 'to'],
    });
  });

  it('cuts recursive schemas instead of looping', () => {
    interface Node {
      name: string;
      children: Node[];
    }
    const node: z.ZodType<Node> = z.lazy(() =>
      z.object({ name: z.string(), children: z.array(node) }),
    );
    const schema = zodToJsonSchema(z.object({ root: node }));
    expect(JSON.stringify(schema)).not.toContain('$ref');
  });

  it('rejects bad names, aliases and non-object inputs', () => {
    expect(() =>
      defineTool({
        name: 'has space',
        description: '',
        input: z.object({}),
        execute: async () => '',
      }),
    ).toThrow(AgentError);
    expect(() =>
      defineTool({
        name: 'a'.repeat(65),
        description: '',
        input: z.object({}),
        execute: async () => '',
      }),
    ).toThrow(/must match/);
    expect(() =>
      defineTool({
        name: 'ok',
        aliases: ['no/slash'],
        description: '',
        input: z.object({}),
        execute: async () => '',
      }),
    ).toThrow(/Invalid alias/);
    expect(() =>
      defineTool({ name: 'ok', description: '', input: z.string(), execute: async () => '' }),
    ).toThrow(/must describe an object/);
  });

  it('turns a returned string into a text result and checks details against the output schema', async () => {
    const context = {
      toolCallId: '1',
      toolName: 't',
      signal: new AbortController().signal,
      onUpdate: () => {},
      onProgress: () => {},
    };
    const plain = defineTool({
      name: 'plain',
      description: '',
      input: z.object({}),
      execute: async () => 'hello',
    });
    expect(await plain.execute({}, context)).toEqual({
      content: [{ type: 'text', text: 'hello' }],
    });
    const typed = defineTool({
      name: 'typed',
      description: '',
      input: z.object({ good: z.boolean() }),
      output: z.object({ count: z.number() }),
      execute: async ({ good }) => ({
        content: [{ type: 'text', text: 'x' }],
        details: (good ? { count: 1 } : { count: 'one' }) as { count: number },
      }),
    });
    expect(typed.outputSchema).toMatchObject({
      type: 'object',
      properties: { count: { type: 'number' } },
    });
    await expect(typed.execute({ good: true }, context)).resolves.toMatchObject({
      details: { count: 1 },
    });
    await expect(typed.execute({ good: false }, context)).rejects.toThrow(
      /do not match its output schema/,
    );
  });
});

describe('validation messages', () => {
  const schema = z.object({
    limit: z.number(),
    flag: z.boolean().optional(),
    mode: z.enum(['fast', 'slow']).optional(),
    items: z.array(z.object({ name: z.string() })).optional(),
    target: z.union([z.string(), z.object({ id: z.number() })]).optional(),
  });

  it('spells out the first 20 issues and counts the rest', () => {
    const names = z.object({ names: z.array(z.string()) });
    const message = issuesOf(names, { names: new Array(10_000).fill(0) });
    expect(message.split('; ')).toHaveLength(21);
    expect(message).toMatch(
      /^at "names\[0\]": expected string, received number 0; .*; at "names\[19\]": expected string, received number 0; and 9980 more issues$/,
    );
    expect(issuesOf(names, { names: new Array(21).fill(0) })).toMatch(/; and 1 more issue$/);
    expect(issuesOf(names, { names: new Array(20).fill(0) })).toMatch(/names\[19\].*number 0$/);
  });

  it('names the path, the expected type and what was received, with a hint', () => {
    expect(issuesOf(schema, { limit: '50' })).toBe(
      'at "limit": expected number, received string "50" (hint: send 50 as a number, without quotes)',
    );
    expect(issuesOf(schema, { limit: 1, flag: 'true' })).toBe(
      'at "flag": expected boolean, received string "true" (hint: send true as a boolean, without quotes)',
    );
    expect(issuesOf(schema, {})).toBe('at "limit": required number is missing');
    expect(issuesOf(schema, { limit: 1, items: [{ name: 'a' }, { name: 3 }] })).toBe(
      'at "items[1].name": expected string, received number 3',
    );
    expect(issuesOf(schema, { limit: 1, mode: 'medium' })).toBe(
      'at "mode": expected one of "fast", "slow", received string "medium"',
    );
    expect(issuesOf(schema, { limit: 1, target: 5 })).toMatch(
      /^at "target": matches none of the allowed shapes/,
    );
    expect(issuesOf(schema, 'not an object')).toBe(
      'at "(root)": expected object, received string "not an object"',
    );
  });

  it('reports unknown keys of strict objects', () => {
    expect(issuesOf(z.strictObject({ a: z.string() }), { a: 'x', b: 1, c: 2 })).toBe(
      'at "(root)": unknown fields "b", "c"',
    );
  });

  it('reports every issue, joined', () => {
    expect(issuesOf(schema, { limit: 'x', flag: 3 }).split('; ')).toHaveLength(2);
  });
});

describe('inlineJsonSchema', () => {
  it('inlines local definitions and keeps sibling keywords', () => {
    const schema = inlineJsonSchema({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { a: { $ref: '#/definitions/A', description: 'the a' } },
      definitions: { A: { type: 'string', minLength: 1 } },
    });
    expect(schema).toEqual({
      type: 'object',
      properties: { a: { type: 'string', minLength: 1, description: 'the a' } },
    });
  });

  it('fails clearly on an unresolvable reference', () => {
    expect(() =>
      inlineJsonSchema({ type: 'object', properties: { a: { $ref: '#/$defs/Missing' } } }),
    ).toThrow(/Unresolvable \$ref/);
  });
});

describe('plain JSON Schema tools', () => {
  it('are validated against their parameters by the loop, with paths', async () => {
    const { Agent } = await import('./agent.js');
    const { createScriptedProvider } = await import('./testing/scripted-provider.js');
    const calls: unknown[] = [];
    const provider = createScriptedProvider([
      {
        toolCalls: [
          {
            id: 'a',
            name: 'list_issues',
            arguments: { owner: 'acme', per_page: 10, state: 'open' },
          },
          { id: 'b', name: 'list_issues', arguments: { owner: 'acme', per_page: '10' } },
          { id: 'c', name: 'list_issues', arguments: { per_page: 5, state: 'weird' } },
        ],
      },
      { text: 'ok' },
    ]);
    const agent = new Agent({
      provider,
      model: 'm',
      tools: [
        {
          name: 'list_issues',
          description: 'Lists issues (plain JSON Schema, as MCP or OpenAPI tools have)',
          parameters: {
            type: 'object',
            properties: {
              owner: { type: 'string' },
              per_page: { type: 'integer', minimum: 1, maximum: 100 },
              state: { enum: ['open', 'closed'] },
            },
            required: ['owner'],
          },
          execute: async (args) => {
            calls.push(args);
            return { content: [{ type: 'text', text: 'listed' }] };
          },
        },
      ],
    });
    await agent.run('go').result;
    const results = agent.messages.filter((m) => m.role === 'toolResult');
    expect(results.map((m) => m.isError)).toEqual([false, true, true]);
    const text = (index: number) => JSON.stringify(results[index]?.content);
    expect(text(1)).toContain(
      'at \\"per_page\\": expected integer, received string \\"10\\" (hint: send 10 as a number',
    );
    expect(text(2)).toContain('at \\"owner\\": required string is missing');
    expect(text(2)).toContain('at \\"state\\"');
    expect(calls).toEqual([{ owner: 'acme', per_page: 10, state: 'open' }]);
  });
});
