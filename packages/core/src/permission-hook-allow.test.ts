import { describe, expect, it } from 'vitest';
import { PermissionPolicy, type PermissionQuery } from './permissions.js';

// `allowedBy` (a PreToolUse hook's allow) waives the question only; what the user ruled on stands.
const query = (extra: Partial<PermissionQuery> = {}): PermissionQuery => ({
  toolName: 'write_file',
  tier: 'workspace-write',
  subjects: ['/ws/a.txt'],
  allowedBy: 'my hook',
  ...extra,
});

describe('a call a hook allowed', () => {
  it.each([
    ['a disabled tool', { disabledTools: ['write_file'] }, 'disabled'],
    ['a deny rule', { deny: ['write_file'] }, 'deny-rule'],
    ['a deny rule on its subject', { deny: ['write_file(/ws/*)'] }, 'deny-rule'],
    [
      'a "never" grant',
      { grants: [{ tool: 'write_file', subject: '/ws/a.txt', decision: 'deny' as const }] },
      'grant',
    ],
    ['plan mode', { mode: 'plan' as const }, 'mode'],
  ] as const)('is denied by %s', (_name, options, decidedBy) => {
    expect(new PermissionPolicy(options).evaluate(query())).toMatchObject({
      behavior: 'deny',
      decidedBy,
    });
  });

  it('is asked when an ask rule covers it, even in full-access mode', () => {
    const policy = new PermissionPolicy({ mode: 'full-access', ask: ['write_file'] });
    expect(policy.evaluate(query())).toMatchObject({ behavior: 'ask', askRule: 'write_file' });
  });

  it.each([
    ['with nothing else to say', {}, query()],
    ['when opaque', {}, query({ opaque: 'eval of a variable' })],
    ['in read-only mode', { mode: 'read-only' as const }, query()],
  ])('is allowed without a question %s', (_name, options, asked) => {
    expect(new PermissionPolicy(options).evaluate(asked)).toEqual({
      behavior: 'allow',
      decidedBy: 'hook',
    });
  });

  it('without the hook, the same calls ask', () => {
    const policy = new PermissionPolicy({});
    const { allowedBy: _hook, ...unhooked } = query();
    expect(policy.evaluate(unhooked).behavior).toBe('ask');
    expect(policy.evaluate({ ...unhooked, opaque: 'x' }).behavior).toBe('ask');
  });
});
