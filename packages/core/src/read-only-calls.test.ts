// A call the gate allows only to read reaches its tool as `ctx.readOnly`: in read-only and plan
// mode a call at the read-only tier runs so however it was allowed (the mode, a rule, a hook, an
// answer), so a tool with an OS sandbox runs it where nothing can be written — its own judgment
// of the call (a shell line "only reads") may be wrong. A call at a writing tier the user allowed
// is not marked; nor is any call in a mode that lets writes through.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineTool } from './define-tool.js';
import type { PermissionMode } from './permission-types.js';
import { PermissionPolicy } from './permissions.js';
import { MemoryRunJournal } from './run-journal.js';
import { requestFor, scriptedApprover } from './testing/permission-fixtures.js';
import { agentWith, runToEnd } from './testing/test-helpers.js';
import type { PermissionTier } from './tool.js';

/** A tool whose calls carry the tier given in their arguments (as bash's do), recording `ctx.readOnly`. */
function recordingTool(seen: (boolean | undefined)[]) {
  return defineTool({
    name: 'shell',
    description: 'runs a line',
    input: z.object({ tier: z.enum(['read-only', 'workspace-write', 'full-access']) }),
    policy: { permission: 'full-access', minimumPermission: 'read-only' },
    permissionSubjects: ({ tier }) => ({ subjects: [`line at ${tier}`], tier }),
    execute: async (_args, ctx) => {
      seen.push(ctx.readOnly);
      return 'ran';
    },
  });
}

describe('PermissionPolicy: readOnly on an allowed call', () => {
  const tool = recordingTool([]);
  const ask = (mode: PermissionMode, tier: PermissionTier, options: { allow?: string[] } = {}) => {
    const { approver } = scriptedApprover(['once']);
    const policy = new PermissionPolicy({ mode, approver, allow: options.allow ?? [] });
    return policy.gate(requestFor(tool, ['line'], { tier }));
  };

  it.each([
    ['read-only', 'read-only', true],
    ['plan', 'read-only', true],
    ['read-only', 'workspace-write', undefined],
    ['workspace-write', 'read-only', undefined],
    ['full-access', 'read-only', undefined],
    ['default', 'read-only', undefined],
  ] as const)('mode %s, a call at %s: readOnly %s', async (mode, tier, readOnly) => {
    const decision = await ask(mode, tier);
    expect(decision.behavior).toBe('allow');
    expect(decision.behavior === 'allow' ? decision.readOnly : 'denied').toBe(readOnly);
  });

  it('a read-only-tier call an allow rule covers still runs read-only in read-only mode', async () => {
    const decision = await ask('read-only', 'read-only', { allow: ['shell'] });
    expect(decision).toMatchObject({ behavior: 'allow', readOnly: true });
  });

  it('a read-only-tier call a hook allowed, or the user answered, runs read-only', async () => {
    const policy = new PermissionPolicy({
      mode: 'read-only',
      approver: scriptedApprover(['once']).approver,
    });
    const hooked = policy.evaluate({
      ...requestFor(tool, ['line'], { tier: 'read-only' }),
      allowedBy: 'hook',
    });
    expect(hooked).toMatchObject({ behavior: 'allow', decidedBy: 'hook', readOnly: true });
    const opaque = await policy.check({
      ...requestFor(tool, ['line'], { tier: 'read-only' }),
      opaque: 'cannot be named',
    });
    expect(opaque).toMatchObject({ behavior: 'allow', decidedBy: 'approver', readOnly: true });
  });
});

describe('the loop hands readOnly to the tool', () => {
  const calls = [
    { name: 'shell', arguments: { tier: 'read-only' } },
    { name: 'shell', arguments: { tier: 'workspace-write' } },
  ];
  it.each([
    ['without a journal', false],
    ['with a run journal', true],
  ])('%s', async (_label, journaled) => {
    const seen: (boolean | undefined)[] = [];
    const policy = new PermissionPolicy({
      mode: 'read-only',
      approver: scriptedApprover(['once']).approver,
    });
    const { agent } = agentWith([{ toolCalls: calls }, { text: 'done' }], [recordingTool(seen)], {
      permissionGate: policy.gate,
      toolExecution: { type: 'sequential' },
      ...(journaled ? { journal: new MemoryRunJournal() } : {}),
    });
    await runToEnd(agent, 'go');
    // The reading call runs read-only; the writing one the user answered for does not.
    expect(seen).toEqual([true, undefined]);
  });

  it('a mode changed between calls is followed', async () => {
    const seen: (boolean | undefined)[] = [];
    const policy = new PermissionPolicy({ mode: 'read-only' });
    const { agent } = agentWith(
      [
        { toolCalls: [calls[0] as (typeof calls)[number]] },
        { toolCalls: [calls[0] as (typeof calls)[number]] },
        { text: 'done' },
      ],
      [recordingTool(seen)],
      {
        permissionGate: (request) => {
          const decision = policy.gate(request);
          policy.setMode('workspace-write');
          return decision;
        },
      },
    );
    await runToEnd(agent, 'go');
    expect(seen).toEqual([true, undefined]);
  });
});
