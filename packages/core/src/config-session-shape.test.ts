import { describe, expect, it } from 'vitest';
import { createConfigTools } from './config-tools.js';
import { PermissionPolicy } from './permissions.js';
import { StaticToolExecutor } from './static-tool-executor.js';

// Kiro CLI's `session {operation, key?, value?}` (its in-memory settings tool) on config_set,
// with the setting names of Kiro's own description (`chat.disableMarkdownRendering`).
function setup(rules: ConstructorParameters<typeof PermissionPolicy>[0] = { mode: 'full-access' }) {
  const stored: Record<string, unknown> = {
    'chat.disableMarkdownRendering': false,
    'chat.defaultModel': 'fast',
  };
  const tools = createConfigTools({
    settings: {
      'chat.disableMarkdownRendering': {
        description: 'Show replies as plain text.',
        get: () => stored['chat.disableMarkdownRendering'],
        set: (value) => {
          stored['chat.disableMarkdownRendering'] = value;
          return undefined;
        },
        values: [true, false],
      },
      'chat.defaultModel': { description: 'The model.', get: () => stored['chat.defaultModel'] },
    },
  });
  const executor = new StaticToolExecutor({ permissionGate: new PermissionPolicy(rules).gate });
  for (const tool of tools) executor.register(tool);
  return { stored, executor };
}

describe('session (Kiro) → config / config_set', () => {
  it('list, get, set as config and config_set would', async () => {
    const { stored, executor } = setup();
    expect(JSON.parse(await executor.execute('session', { operation: 'list' }))).toEqual({
      'chat.disableMarkdownRendering': false,
      'chat.defaultModel': 'fast',
    });
    expect(await executor.execute('session', { operation: 'get', key: 'chat.defaultModel' })).toBe(
      '"fast"',
    );
    expect(
      await executor.execute('session', {
        operation: 'set',
        key: 'chat.disableMarkdownRendering',
        value: true,
      }),
    ).toBe('chat.disableMarkdownRendering is now true (was false).');
    expect(stored['chat.disableMarkdownRendering']).toBe(true);
  });

  it.each([
    [{ operation: 'reset' }, /reset is not offered/],
    [{ operation: 'reset', key: 'chat.defaultModel' }, /reset is not offered/],
    [{ operation: 'get' }, /get needs "key"/],
    [{ operation: 'set', key: 'chat.disableMarkdownRendering' }, /set needs "value"/],
    [{ operation: 'set', key: 'chat.defaultModel', value: 'slow' }, /cannot be changed/],
    [{ operation: 'set', key: 'chat.disableMarkdownRendering', value: 'maybe' }, /invalid value/],
    [{ operation: 'delete', key: 'x' }, /expected one of/],
    [{ operation: 'get', key: 'x', extra: 1 }, /unknown field "extra"/],
  ])('refuses %j, nothing changed', async (args, message) => {
    const { stored, executor } = setup();
    await expect(executor.execute('session', args)).rejects.toThrow(message);
    expect(stored).toEqual({ 'chat.disableMarkdownRendering': false, 'chat.defaultModel': 'fast' });
  });

  it('meets config_set’s rules: a set is a change, list and get are reads', async () => {
    const { stored, executor } = setup({
      mode: 'read-only',
      allow: ['config_set(read:*)'],
    });
    await expect(
      executor.execute('session', {
        operation: 'set',
        key: 'chat.disableMarkdownRendering',
        value: true,
      }),
    ).rejects.toMatchObject({ kind: 'denied' });
    expect(stored['chat.disableMarkdownRendering']).toBe(false);
    expect(await executor.execute('session', { operation: 'get', key: 'chat.defaultModel' })).toBe(
      '"fast"',
    );
    expect(await executor.execute('session', { operation: 'list' })).toContain('chat.defaultModel');
  });
});
