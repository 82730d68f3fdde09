// Red-team attempts at a child getting more than its parent has, through what the parent's model
// controls (the call's arguments) or the child's (how it names a tool), that held: each row is a
// call the parent's deny rule must still stop inside the child.
import { Agent, defineTool, PermissionPolicy } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createAgentTool, createSubAgentTool } from './index.js';
import { toolResults } from './test-helpers.js';

describe("a child's call stays inside the parent's deny rule", () => {
  it.each<[string, string, Record<string, unknown>, string]>([
    ['the sub-agent tool itself', 'helper', { task: 'act' }, 'act'],
    ['the tool called by its alias', 'helper', { task: 'act' }, 'Act'],
    [
      "claw-code's Agent asking for another model",
      'Agent',
      { description: 'act', prompt: 'act', model: 'other-model', name: 'root' },
      'act',
    ],
    [
      "Kiro's InvokeSubagents with dangerously_trust_all_tools",
      'use_subagent',
      {
        command: 'InvokeSubagents',
        content: { subagents: [{ query: 'act', dangerously_trust_all_tools: true }] },
      },
      'act',
    ],
    ["Kiro's delegate", 'delegate', { operation: 'launch', task: 'act' }, 'act'],
  ])('%s', async (_, parentCall, args, childCallName) => {
    const effects: string[] = [];
    const models: string[] = [];
    const act = defineTool({
      name: 'act',
      aliases: ['Act'],
      description: 'acts',
      input: z.object({}),
      policy: { permission: 'workspace-write' },
      execute: async () => {
        effects.push('act');
        return 'acted';
      },
    });
    const helper = createSubAgentTool({
      name: 'helper',
      description: 'does it',
      model: 'child-model',
      provider: createScriptedProvider([
        (request) => {
          models.push(request.model);
          return { toolCalls: [{ id: 'c1', name: childCallName, arguments: {} }] };
        },
        { text: 'child done' },
      ]),
      tools: [act],
    });
    const tool = parentCall === 'helper' ? helper : createAgentTool({ agents: [helper] });
    const denied: string[] = [];
    const policy = new PermissionPolicy({ mode: 'full-access', deny: ['act'] });
    const result = await new Agent({
      model: 'm',
      provider: createScriptedProvider([
        { toolCalls: [{ id: 'p1', name: parentCall, arguments: args }] },
        { text: 'done' },
      ]),
      tools: [tool],
      permissionGate: async (request) => {
        const decision = await policy.gate(request);
        if (decision.behavior === 'deny')
          denied.push(`${request.agentPath?.join('/')}:${request.toolName}`);
        return decision;
      },
    }).run('go').result;
    expect(result.stopReason).toBe('completed');
    expect(effects).toEqual([]);
    expect(denied).toEqual(['helper:act']);
    expect(models).toEqual(['child-model']);
    expect(toolResults(result.messages)[0]?.isError).toBeFalsy();
  });
});
