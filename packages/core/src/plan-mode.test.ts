import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import { defineTool } from './define-tool.js';
import { PermissionPolicy, type PermissionQuery } from './permissions.js';
import { createScriptedProvider } from './testing/scripted-provider.js';
import { resultText, runToEnd, toolResults } from './testing/test-helpers.js';
import type { PermissionTier } from './tool.js';

const query = (
  toolName: string,
  tier: PermissionTier,
  subjects: string[] = [],
): PermissionQuery => ({
  toolName,
  tier,
  subjects,
});

describe('plan mode', () => {
  it('allows read-only tools without asking, only to read', () => {
    const policy = new PermissionPolicy({ mode: 'plan' });
    expect(policy.evaluate(query('read_file', 'read-only', ['/ws/a.ts']))).toEqual({
      behavior: 'allow',
      decidedBy: 'mode',
      readOnly: true,
    });
  });

  it.each([
    ['workspace-write', 'an allow rule', { allow: ['write_file'] }],
    ['workspace-write', 'an allow rule with the subject', { allow: ['write_file(/ws/*)'] }],
    ['full-access', 'a wildcard allow rule', { allow: ['*'] }],
    [
      'workspace-write',
      'an always grant',
      { grants: [{ tool: 'write_file', decision: 'allow' as const }] },
    ],
    ['full-access', 'nothing', {}],
  ] as const)(
    'denies a %s tool whatever allows it (%s), without asking',
    async (tier, _what, options) => {
      let asked = 0;
      const policy = new PermissionPolicy({
        mode: 'plan',
        ...options,
        approver: () => {
          asked++;
          return 'always';
        },
      });
      const outcome = policy.evaluate(query('write_file', tier, ['/ws/a.ts']));
      expect(outcome).toMatchObject({ behavior: 'deny', decidedBy: 'mode' });
      expect(outcome.behavior === 'deny' && outcome.reason).toMatch(
        /^Plan mode: only read-only tools run/,
      );
      const checked = await policy.check({
        ...query('write_file', tier, ['/ws/a.ts']),
        toolCallId: 'c',
        requestedName: 'write_file',
        args: {},
        tool: defineTool({
          name: 'write_file',
          description: 'w',
          input: z.object({}),
          execute: async () => '',
        }),
        assistantMessage: {
          role: 'assistant',
          content: [],
          provider: 'p',
          model: 'm',
          usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
          stopReason: 'toolUse',
          timestamp: 0,
        },
      });
      expect(checked).toMatchObject({ behavior: 'deny', decidedBy: 'mode' });
      expect(asked).toBe(0);
    },
  );

  it('keeps deny and ask rules for read-only tools, and hides non-read-only tools from couldAllow', () => {
    const policy = new PermissionPolicy({
      mode: 'plan',
      deny: ['read_file(/ws/.env)'],
      ask: ['search'],
      allow: ['write_file'],
    });
    expect(policy.evaluate(query('read_file', 'read-only', ['/ws/.env'])).behavior).toBe('deny');
    expect(policy.evaluate(query('search', 'read-only')).behavior).toBe('ask');
    const writer = { name: 'write_file', policy: { permission: 'workspace-write' as const } };
    expect(policy.couldAllow(writer)).toBe(false);
    expect(policy.couldAllow({ name: 'read_file', policy: { permission: 'read-only' } })).toBe(
      true,
    );
    policy.setMode('workspace-write');
    expect(policy.couldAllow(writer)).toBe(true);
  });

  it('in a run: reads run, a write is denied with the reason, and after the mode changes the write runs', async () => {
    const written: string[] = [];
    const policy = new PermissionPolicy({ mode: 'plan', allow: ['write_file'] });
    const read = defineTool({
      name: 'read_file',
      description: 'r',
      input: z.object({ path: z.string() }),
      policy: { permission: 'read-only' },
      execute: async ({ path }) => `content of ${path}`,
    });
    const write = defineTool({
      name: 'write_file',
      description: 'w',
      input: z.object({ path: z.string() }),
      policy: { permission: 'workspace-write' },
      execute: async ({ path }) => {
        written.push(path);
        return 'written';
      },
    });
    // Stands in for a front end's plan tool: approving the plan switches the mode.
    const approve = defineTool({
      name: 'approve_plan',
      description: 'a',
      input: z.object({}),
      policy: { permission: 'read-only' },
      execute: async () => {
        policy.setMode('workspace-write');
        return 'approved';
      },
    });
    const provider = createScriptedProvider([
      {
        toolCalls: [
          { name: 'read_file', arguments: { path: 'a.ts' } },
          { name: 'write_file', arguments: { path: 'a.ts' } },
        ],
      },
      { toolCalls: [{ name: 'approve_plan', arguments: {} }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'a.ts' } }] },
      { text: 'done' },
    ]);
    const agent = new Agent({
      provider,
      model: 'm',
      tools: [read, write, approve],
      permissionGate: policy.gate,
      toolExecution: { type: 'sequential' },
    });
    const { result } = await runToEnd(agent, 'plan, then do');
    expect(result.stopReason).toBe('completed');
    const results = toolResults(agent.messages);
    expect(
      results.map((message) => [message.toolName, message.isError, message.errorKind]),
    ).toEqual([
      ['read_file', false, undefined],
      ['write_file', true, 'denied'],
      ['approve_plan', false, undefined],
      ['write_file', false, undefined],
    ]);
    expect(resultText(results[1])).toContain('Plan mode: only read-only tools run');
    expect(written).toEqual(['a.ts']);
  });

  it('is a valid mode by name, and others still are not', () => {
    expect(() => new PermissionPolicy({ mode: 'plan' })).not.toThrow();
    expect(() => new PermissionPolicy({ mode: 'planning' as never })).toThrow(
      /expected one of default, read-only, workspace-write, full-access, plan/,
    );
  });
});
