import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  Agent,
  type AnyAgentTool,
  defineTool,
  type PermissionApprover,
  PermissionPolicy,
  type PermissionRequest,
} from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createSubAgentTool } from './sub-agent-tool.js';
import { toolResults } from './test-helpers.js';

// A sub-agent runs inside its parent's containment: the parent's gate (rules, mode, grants,
// approver), the parent's hooks, the parent's budget and depth limit. Tried the way an
// adversarial model would: delegating what the parent may not do itself.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A real tool that removes a file of a temp dir; subject `rm <name>`. */
function removeTool(dir: string): AnyAgentTool {
  return defineTool({
    name: 'remove',
    description: 'Removes a file.',
    input: z.object({ file: z.string() }),
    policy: { permission: 'workspace-write' },
    permissionSubjects: ({ file }) => [`rm ${file}`],
    execute: async ({ file }) => {
      fs.rmSync(path.join(dir, file));
      return `removed ${file}`;
    },
  });
}

function workspace(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'subagent-containment-'));
  dirs.push(dir);
  fs.writeFileSync(path.join(dir, 'victim'), 'keep');
  fs.writeFileSync(path.join(dir, 'build'), 'old');
  return dir;
}

/** A child whose model removes `file`, then reports. */
function remover(
  dir: string,
  file: string,
  extra: Partial<Parameters<typeof createSubAgentTool>[0]> = {},
) {
  return createSubAgentTool({
    name: 'helper',
    description: 'Does chores.',
    provider: createScriptedProvider([
      { toolCalls: [{ name: 'remove', arguments: { file } }] },
      { text: 'done' },
    ]),
    model: 'child',
    tools: [removeTool(dir)],
    ...extra,
  });
}

/** A parent whose model asks the sub-agent tool(s) to do something. */
function parent(
  tools: AnyAgentTool[],
  policy: PermissionPolicy | undefined,
  calls: { name: string; task: string }[] = [{ name: 'helper', task: 'tidy up' }],
) {
  return new Agent({
    provider: createScriptedProvider([
      { toolCalls: calls.map(({ name, task }) => ({ name, arguments: { task } })) },
      { text: 'parent done' },
    ]),
    model: 'parent',
    tools,
    ...(policy === undefined ? {} : { permissionGate: policy.gate }),
  });
}

describe('sub-agent containment', () => {
  it("a parent's deny rule blocks the child's matching call, even with the child's own permissive policy", async () => {
    const dir = workspace();
    const policy = new PermissionPolicy({ mode: 'full-access', deny: ['remove(rm victim*)'] });
    const permissive = new PermissionPolicy({ mode: 'full-access' });
    for (const child of [
      remover(dir, 'victim'),
      remover(dir, 'victim', { permissionGate: permissive.gate }),
    ]) {
      const result = await parent([child], policy).run('go').result;
      expect(result.stopReason).toBe('completed');
      expect(fs.existsSync(path.join(dir, 'victim'))).toBe(true);
    }
  });

  it("a child's own narrower policy denies what the parent would allow", async () => {
    const dir = workspace();
    const policy = new PermissionPolicy({ mode: 'full-access' });
    const narrower = new PermissionPolicy({ mode: 'full-access', deny: ['remove'] });
    const child = remover(dir, 'build', { permissionGate: narrower.gate });
    await parent([child], policy).run('go').result;
    expect(fs.existsSync(path.join(dir, 'build'))).toBe(true);
  });

  it("a parent's ask rule reaches the parent's approver with the chain of sub-agents named", async () => {
    const dir = workspace();
    const asked: PermissionRequest[] = [];
    const approver: PermissionApprover = (request) => {
      asked.push(request);
      return 'once';
    };
    const policy = new PermissionPolicy({
      mode: 'full-access',
      ask: ['remove(rm build)'],
      approver,
    });
    await parent([remover(dir, 'build')], policy).run('go').result;
    expect(asked).toHaveLength(1);
    expect(asked[0]?.agentPath).toEqual(['helper']);
    expect(asked[0]?.subjects).toEqual(['rm build']);
    expect(fs.existsSync(path.join(dir, 'build'))).toBe(false);
  });

  it('a "never" grant holds in the child; an "always" given to a child is a grant of the session', async () => {
    const dir = workspace();
    const never = new PermissionPolicy({
      mode: 'default',
      grants: [{ tool: 'remove', subject: 'rm victim', decision: 'deny' }],
    });
    await parent([remover(dir, 'victim')], never).run('go').result;
    expect(fs.existsSync(path.join(dir, 'victim'))).toBe(true);

    let questions = 0;
    const session = new PermissionPolicy({
      approver: () => {
        questions += 1;
        return 'always';
      },
    });
    await parent([remover(dir, 'build')], session).run('go').result;
    expect(session.grants).toContainEqual({
      tool: 'remove',
      subject: 'rm build',
      decision: 'allow',
    });
    expect(questions).toBe(2); // the parent's call of `helper`, and the child's `remove`
    // The parent's own identical call is answered by the child's grant: no new question.
    fs.writeFileSync(path.join(dir, 'build'), 'again');
    const own = new Agent({
      provider: createScriptedProvider([
        { toolCalls: [{ name: 'remove', arguments: { file: 'build' } }] },
        { text: 'ok' },
      ]),
      model: 'parent',
      tools: [removeTool(dir)],
      permissionGate: session.gate,
    });
    await own.run('again').result;
    expect(questions).toBe(2);
    expect(fs.existsSync(path.join(dir, 'build'))).toBe(false);
  });

  it("the parent's hooks apply to the child's calls unless the app opts out", async () => {
    const dir = workspace();
    const seen: string[] = [];
    const hooks = {
      beforeToolExecution: (call: { toolName: string }) => {
        seen.push(call.toolName);
        return call.toolName === 'remove'
          ? { action: 'skip' as const, reason: 'blocked by the parent hook' }
          : undefined;
      },
    };
    const withHooks = new Agent({
      provider: createScriptedProvider([
        { toolCalls: [{ name: 'helper', arguments: { task: 'x' } }] },
        { text: 'ok' },
      ]),
      model: 'parent',
      tools: [remover(dir, 'build')],
      hooks,
    });
    await withHooks.run('go').result;
    expect(seen).toEqual(['helper', 'remove']);
    expect(fs.existsSync(path.join(dir, 'build'))).toBe(true);

    seen.length = 0;
    const optedOut = new Agent({
      provider: createScriptedProvider([
        { toolCalls: [{ name: 'helper', arguments: { task: 'x' } }] },
        { text: 'ok' },
      ]),
      model: 'parent',
      tools: [remover(dir, 'build', { inheritHooks: false })],
      hooks,
    });
    await optedOut.run('go').result;
    expect(seen).toEqual(['helper']);
    expect(fs.existsSync(path.join(dir, 'build'))).toBe(false);
  });

  it.each([
    ['a spread copy', (tool: AnyAgentTool) => ({ ...tool })],
    [
      'a wrapper',
      (tool: AnyAgentTool): AnyAgentTool => ({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        execute: (args, ctx) => tool.execute(args, ctx),
      }),
    ],
  ])(
    '%s of a sub-agent tool among its own child tools cannot exceed maxDepth',
    async (_name, copy) => {
      let deepest = 0;
      let refused = false;
      const tools: AnyAgentTool[] = [];
      const recursive = createSubAgentTool({
        name: 'helper',
        description: 'Delegates again.',
        provider: createScriptedProvider(
          [{ toolCalls: [{ name: 'helper', arguments: { task: 'deeper' } }] }],
          { whenExhausted: 'repeat-last' },
        ),
        model: 'child',
        tools,
        maxDepth: 3,
        maxTurns: 2,
        onChildEvent: (event, info) => {
          deepest = Math.max(deepest, info.depth);
          if (event.type === 'message-end' && event.message.role === 'toolResult') {
            if (JSON.stringify(event.message.content).includes('over the limit of 3 (maxDepth)'))
              refused = true;
          }
        },
      });
      // The copy, not the tool object itself, is what the child sees: no marker survives on it.
      tools.push(copy(recursive));
      const root = new Agent({
        provider: createScriptedProvider([
          { toolCalls: [{ name: 'helper', arguments: { task: 'go' } }] },
          { text: 'ok' },
        ]),
        model: 'parent',
        tools: [copy(recursive)],
      });
      const result = await root.run('go').result;
      expect(result.stopReason).toBe('completed');
      expect(deepest).toBe(3);
      expect(refused).toBe(true);
    },
  );

  it('a budget of N model calls across a parent and two children stops at N; the parent counts the tree', async () => {
    const dir = workspace();
    let calls = 0;
    const counting = (name: string) =>
      createSubAgentTool({
        name,
        description: 'Works a while.',
        provider: createScriptedProvider(
          [
            () => {
              calls += 1;
              return {
                toolCalls: [{ name: 'remove', arguments: { file: 'missing' } }],
                usage: { input: 10, output: 5, totalTokens: 15 },
              };
            },
          ],
          { whenExhausted: 'repeat-last' },
        ),
        model: 'child',
        tools: [removeTool(dir)],
      });
    const root = new Agent({
      provider: createScriptedProvider([
        () => {
          calls += 1;
          return {
            toolCalls: [
              { name: 'one', arguments: { task: 'a' } },
              { name: 'two', arguments: { task: 'b' } },
            ],
            usage: { input: 100, output: 50, totalTokens: 150 },
          };
        },
        () => {
          calls += 1;
          return { text: 'never' };
        },
      ]),
      model: 'parent',
      tools: [counting('one'), counting('two')],
      budget: { maxModelCalls: 7 },
    });
    const events: string[] = [];
    root.subscribe((event) => {
      if (event.type === 'agent-end') events.push(event.stopReason);
    });
    const result = await root.run('go').result;
    expect(calls).toBe(7);
    expect(result.stopReason).toBe('budget-exhausted');
    expect(result.budgetReason).toBe('the budget of 7 model calls is spent');
    expect(events).toEqual(['budget-exhausted']);
    // The children ended with a readable result naming the budget.
    const childResults = toolResults(result.messages);
    expect(childResults).toHaveLength(2);
    for (const message of childResults) expect(JSON.stringify(message.content)).toContain('budget');
    // The parent's own usage is one call; the tree's is all seven.
    expect(result.usage.totalTokens).toBe(150);
    expect(result.treeUsage.totalTokens).toBe(150 + 6 * 15);
  });
});
