import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineTool } from './define-tool.js';
import { ToolError } from './errors.js';
import { StaticToolExecutor } from './static-tool-executor.js';

/** Sums `numbers` (claw-code's own `StaticToolExecutor` example, an "add" closure). */
const add = (input: unknown) =>
  String(((input as { numbers: number[] }).numbers ?? []).reduce((sum, n) => sum + n, 0));

async function rejection(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!ToolError.isInstance(error)) throw new Error(`expected a ToolError, got ${String(error)}`);
  return error;
}

describe('StaticToolExecutor with closures', () => {
  it('runs a registered closure in one line and returns its text', async () => {
    const executor = new StaticToolExecutor().register('add', add);
    expect(await executor.execute('add', { numbers: [2, 2] })).toBe('4');
    // The raw JSON text a model would send works too.
    expect(await executor.execute('add', '{"numbers": [40, 2]}')).toBe('42');
  });

  it('lets a closure return a whole ToolResult (text and image parts joined)', async () => {
    const executor = new StaticToolExecutor().register('shot', () => ({
      content: [
        { type: 'text', text: 'here:' },
        { type: 'image', data: 'AA==', mimeType: 'image/png' },
      ],
    }));
    expect(await executor.execute('shot')).toBe('here:\n[image image/png]');
  });

  it('rejects an unknown name with a not-found ToolError listing what exists', async () => {
    const executor = new StaticToolExecutor().register('add', add);
    const error = await rejection(executor.execute('nope', {}));
    expect(error.kind).toBe('not-found');
    expect(error.message).toBe('Tool not found: nope. Available tools: add');
    const result = await executor.executeResult('nope', {});
    expect(result).toMatchObject({ isError: true, errorKind: 'not-found', toolName: 'nope' });
  });

  it('validates against the given parameters before the closure runs', async () => {
    let ran = 0;
    const executor = new StaticToolExecutor().register(
      'add',
      (input) => {
        ran++;
        return add(input);
      },
      {
        parameters: {
          type: 'object',
          properties: { numbers: { type: 'array', items: { type: 'number' } } },
          required: ['numbers'],
        },
      },
    );
    for (const bad of [{}, { numbers: 'two' }, { numbers: [1, '2'] }, '{"numbers": [1,', '[1,2]']) {
      const error = await rejection(executor.execute('add', bad));
      expect(error.kind).toBe('invalid-args');
      expect(error.message).toMatch(/^Invalid arguments: /);
    }
    expect(ran).toBe(0);
    expect(await executor.execute('add', { numbers: [1, 2] })).toBe('3');
  });

  it('turns a thrown error or an isError result into a failed ToolError', async () => {
    const executor = new StaticToolExecutor()
      .register('boom', () => {
        throw new Error('disk on fire');
      })
      .register('soft', () => ({ content: [{ type: 'text', text: 'no luck' }], isError: true }));
    const thrown = await rejection(executor.execute('boom'));
    expect(thrown.kind).toBe('failed');
    expect(thrown.message).toContain('disk on fire');
    const soft = await rejection(executor.execute('soft'));
    expect(soft).toMatchObject({ kind: 'failed', message: 'no luck', toolName: 'soft' });
  });

  it('refuses a name registered twice and a malformed name', () => {
    const executor = new StaticToolExecutor().register('add', add);
    expect(() => executor.register('add', add)).toThrow(/Duplicate tool name "add"/);
    expect(() => executor.register('has space', add)).toThrow(/Invalid tool name/);
  });
});

describe('StaticToolExecutor with AgentTools', () => {
  const echo = defineTool({
    name: 'echo',
    description: 'Echoes text.',
    aliases: ['Echo'],
    input: z.object({ text: z.string() }),
    prepareArguments: (raw) =>
      raw !== null && typeof raw === 'object' && 'message' in raw
        ? { text: (raw as { message: unknown }).message }
        : raw,
    policy: { permission: 'read-only' },
    execute: async ({ text }) => text,
  });

  it('resolves aliases and applies prepareArguments before zod validation', async () => {
    const executor = new StaticToolExecutor().register(echo);
    expect(executor.names()).toEqual(['echo']);
    expect(await executor.execute('Echo', { message: 'via alias' })).toBe('via alias');
    const error = await rejection(executor.execute('echo', { text: 5 }));
    expect(error.kind).toBe('invalid-args');
    expect(error.message).toMatch(/at "text": expected string/);
  });

  it('asks the permission gate given to the executor, and a denial rejects as denied', async () => {
    const seen: string[] = [];
    const executor = new StaticToolExecutor({
      permissionGate: (request) => {
        seen.push(`${request.toolName}:${request.tier}`);
        return request.tier === 'read-only'
          ? { behavior: 'deny', reason: 'not today' }
          : { behavior: 'allow' };
      },
    })
      .register(echo)
      .register('add', add);
    const error = await rejection(executor.execute('echo', { text: 'x' }));
    expect(error.kind).toBe('denied');
    expect(error.message).toContain('not today');
    expect(await executor.execute('add', { numbers: [1] })).toBe('1');
    expect(seen).toEqual(['echo:read-only', 'add:full-access']);
  });

  it('gives each call its own id', async () => {
    const executor = new StaticToolExecutor().register(echo);
    const first = await executor.executeResult('echo', { text: 'a' });
    const second = await executor.executeResult('echo', { text: 'b' });
    expect(first.toolCallId).not.toBe(second.toolCallId);
  });
});
