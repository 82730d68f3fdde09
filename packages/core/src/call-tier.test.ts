import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { PermissionRequest } from './agent-options.js';
import { defineTool } from './define-tool.js';
import { executeTool } from './execute-tool.js';
import { toolResultText } from './messages.js';
import { type PermissionMode, PermissionPolicy } from './permissions.js';
import { normalisePermissionSubjects, type PermissionTier } from './tool.js';

// A tool may give each call a tier of its own (`permissionSubjects` → `{ subjects, tier }`): a
// shell line that only reads needs `read-only`, a sandboxed one `workspace-write`. The gate then
// decides by that tier, in DESIGN §4's order: deny and ask rules, and opaque calls, still come first.

const tierOf: Record<string, PermissionTier | 'bogus'> = {
  ls: 'read-only',
  touch: 'workspace-write',
  curl: 'full-access',
  odd: 'bogus',
};

const shell = defineTool({
  name: 'shell',
  description: 'runs a command',
  input: z.object({ command: z.string() }),
  policy: { permission: 'full-access', minimumPermission: 'read-only' },
  permissionSubjects: ({ command }) => {
    const name = command.split(' ')[0] ?? '';
    return {
      subjects: [command],
      tier: tierOf[name] as PermissionTier | undefined,
      ...(command.includes('$(') ? { opaque: 'a command substitution' } : {}),
    };
  },
  execute: async ({ command }) => `ran ${command}`,
});

async function run(command: string, options: ConstructorParameters<typeof PermissionPolicy>[0]) {
  const seen: PermissionRequest[] = [];
  const policy = new PermissionPolicy(options);
  const result = await executeTool(
    shell,
    { command },
    {
      permissionGate: (request) => {
        seen.push(request);
        return policy.gate(request);
      },
    },
  );
  return { text: toolResultText(result.content), tier: seen[0]?.tier, isError: result.isError };
}

describe('a call tier', () => {
  it.each<[string, PermissionMode, boolean]>([
    ['ls -la', 'read-only', true],
    ['ls -la', 'default', false],
    ['touch x', 'read-only', false],
    ['touch x', 'workspace-write', true],
    ['curl x', 'workspace-write', false],
    ['curl x', 'full-access', true],
    // No tier (or an unknown one): the tool's declared tier stands.
    ['make', 'workspace-write', false],
    ['make', 'full-access', true],
    ['odd', 'workspace-write', false],
    // Plan mode runs a call whose own tier is read-only, and nothing else.
    ['ls -la', 'plan', true],
    ['touch x', 'plan', false],
  ])('%s in %s mode: runs unasked = %s', async (command, mode, runs) => {
    const { text, isError } = await run(command, { mode });
    expect(isError).toBe(!runs);
    if (runs) expect(text).toBe(`ran ${command}`);
    else expect(text).toContain('Permission denied');
  });

  it('the gate is told the tier of the call, not the tool’s', async () => {
    expect((await run('ls', { mode: 'default' })).tier).toBe('read-only');
    expect((await run('touch y', { mode: 'default' })).tier).toBe('workspace-write');
    expect((await run('make', { mode: 'default' })).tier).toBe('full-access');
  });

  it('deny and ask rules and opaque calls still come first', async () => {
    expect(
      (await run('ls secret', { mode: 'full-access', deny: ['shell(ls secret)'] })).text,
    ).toContain('Denied by rule "shell(ls secret)"');
    expect((await run('ls -la', { mode: 'read-only', ask: ['shell(ls *)'] })).isError).toBe(true);
    expect((await run('ls $(rm -rf ~)', { mode: 'full-access' })).isError).toBe(true);
  });

  it('normalisePermissionSubjects keeps only known tiers', () => {
    expect(normalisePermissionSubjects({ subjects: ['x'], tier: 'read-only' }).tier).toBe(
      'read-only',
    );
    expect(normalisePermissionSubjects({ subjects: ['x'], tier: 'admin' as never }).tier).toBe(
      undefined,
    );
    expect(normalisePermissionSubjects(['x']).tier).toBe(undefined);
  });

  it('couldAllow counts the lowest tier a call may need (policy.minimumPermission)', () => {
    const policy = new PermissionPolicy({ mode: 'read-only' });
    expect(policy.couldAllow(shell)).toBe(true);
    const { minimumPermission: _unused, ...declared } = shell.policy ?? {};
    expect(policy.couldAllow({ ...shell, policy: declared })).toBe(false);
    expect(new PermissionPolicy({ mode: 'default' }).couldAllow(shell)).toBe(false);
  });
});
