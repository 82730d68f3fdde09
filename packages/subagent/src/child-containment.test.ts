import {
  Agent,
  defineTool,
  messageText,
  type PermissionRequest,
  ToolRegistry,
  toolResultText,
} from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createSubAgentTool, isSubAgentTool, SubAgentTool } from './index.js';
import {
  addTool,
  delegatingParent,
  detailsOf,
  lastToolResult,
  noteTool,
  resultFor,
  text,
  toolResults,
} from './test-helpers.js';

describe("createSubAgentTool: depth limits, tiers and the parent's gate", () => {
  it('refuses a nested sub-agent beyond maxDepth with a clear error', async () => {
    const registry = new ToolRegistry();
    const starts: number[] = [];
    const refusals: { depth: number; text: string }[] = [];
    const provider = createScriptedProvider(
      [
        (request) => {
          const last = lastToolResult(request);
          return last === undefined
            ? {
                toolCalls: [{ name: 'delegate', arguments: { task: 'go deeper' } }],
                usage: { input: 1, output: 1 },
              }
            : { text: `saw: ${text(last)}`, usage: { input: 1, output: 1 } };
        },
      ],
      { whenExhausted: 'repeat-last' },
    );
    const delegate = createSubAgentTool({
      name: 'delegate',
      description: 'Delegates, recursively.',
      provider,
      model: 'm',
      tools: registry,
      maxDepth: 2,
      onChildEvent: (event, info) => {
        if (event.type === 'agent-start') starts.push(info.depth);
        if (event.type === 'tool-execution-end' && event.isError)
          refusals.push({
            depth: info.depth,
            text: toolResultText(event.result.content),
          });
      },
    });
    // The sub-agent may call itself: the live registry is read at each run.
    registry.register(delegate);
    const parent = new Agent({ provider, model: 'm', tools: [delegate] });
    const result = await parent.run('go').result;

    expect(result.stopReason).toBe('completed');
    expect(starts).toEqual([1, 2]);
    const refusal =
      'Sub-agent "delegate" was not started: it would run at nesting depth 3, over the limit of 2 ' +
      '(maxDepth). Do this part yourself with your other tools.';
    expect(refusals).toEqual([{ depth: 2, text: refusal }]);
    expect(messageText(result.finalMessage ?? { role: 'user', content: '', timestamp: 0 })).toBe(
      `saw: saw: saw: ${refusal}`,
    );
    // totalUsage adds the nested child's usage to the child's own.
    const details = detailsOf(resultFor(result, toolResults(result.messages)[0]?.toolCallId ?? ''));
    expect(details.usage.totalTokens).toBe(4);
    expect(details.totalUsage.totalTokens).toBe(8);
    expect(delegate.callerDepth).toBe(0);
    expect(delegate.depthLimit).toBe(2);
  });

  it('the smallest maxDepth along the chain wins', async () => {
    const inner = createSubAgentTool({
      name: 'inner',
      description: 'Inner.',
      provider: createScriptedProvider([{ text: 'inner ran' }]),
      model: 'm',
      maxDepth: 5,
    });
    const outer = createSubAgentTool({
      name: 'outer',
      description: 'Outer.',
      provider: createScriptedProvider([
        { toolCalls: [{ name: 'inner', arguments: { task: 'x' } }] },
        (request) => ({ text: text(lastToolResult(request)) }),
      ]),
      model: 'm',
      tools: [inner],
      maxDepth: 1,
    });
    const parent = new Agent({
      provider: delegatingParent('outer', 'y'),
      model: 'm',
      tools: [outer],
    });
    const result = await parent.run('go').result;
    expect(text(resultFor(result, 'call_sub'))).toContain(
      'Sub-agent "inner" was not started: it would run at nesting depth 2, over the limit of 1',
    );
  });

  it('derives its permission tier from the child tools and passes the permission gate to the child', async () => {
    const notes: string[] = [];
    const base = { description: 'd', provider: createScriptedProvider([]), model: 'm' };
    expect(createSubAgentTool({ ...base, name: 'none' }).policy?.permission).toBe('read-only');
    expect(createSubAgentTool({ ...base, name: 'r', tools: [addTool] }).policy?.permission).toBe(
      'read-only',
    );
    const writer = createSubAgentTool({ ...base, name: 'w', tools: [addTool, noteTool(notes)] });
    expect(writer.policy?.permission).toBe('workspace-write');
    expect(writer.policy?.exclusive).toBe(false);
    const untyped = defineTool({
      name: 'untyped',
      description: 'No policy.',
      input: z.object({}),
      execute: async () => 'ok',
    });
    expect(createSubAgentTool({ ...base, name: 'f', tools: [untyped] }).policy?.permission).toBe(
      'full-access',
    );
    expect(
      createSubAgentTool({
        ...base,
        name: 'o',
        tools: [untyped],
        policy: { permission: 'read-only' },
      }).policy?.permission,
    ).toBe('read-only');
    const registry = new ToolRegistry([addTool]);
    const self = createSubAgentTool({ ...base, name: 'self', tools: registry });
    registry.register(self);
    expect(self.policy?.permission).toBe('read-only');
    registry.register(noteTool(notes));
    expect(self.policy?.permission).toBe('workspace-write');
    expect(isSubAgentTool(self)).toBe(true);
    expect(isSubAgentTool(addTool)).toBe(false);
    expect(SubAgentTool.isInstance(self)).toBe(true);

    const gated: PermissionRequest[] = [];
    const worker = createSubAgentTool({
      name: 'worker',
      description: 'Writes notes.',
      provider: createScriptedProvider([
        { toolCalls: [{ name: 'note', arguments: { text: 'hello' } }] },
        (request) => ({ text: text(lastToolResult(request)) }),
      ]),
      model: 'm',
      tools: [noteTool(notes)],
      permissionGate: (request) => {
        gated.push(request);
        return { behavior: 'deny', reason: 'notes are read-only today' };
      },
    });
    const parentGate: string[] = [];
    const parent = new Agent({
      provider: delegatingParent('worker', 'write'),
      model: 'm',
      tools: [worker],
      permissionGate: (request) => {
        parentGate.push(`${request.toolName}:${request.tier}`);
        return { behavior: 'allow' };
      },
    });
    const result = await parent.run('go').result;
    expect(parentGate).toEqual(['worker:workspace-write']);
    expect(gated.map((request) => request.toolName)).toEqual(['note']);
    expect(text(resultFor(result, 'call_sub'))).toBe(
      'Permission denied: notes are read-only today',
    );
    expect(notes).toEqual([]);
  });
});
