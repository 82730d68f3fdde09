// A sub-agent call that was running when its process died (kill -9), resumed from the parent's
// journal: the child is run again only when every tool it has is repeatable. A child that may
// have written, deleted or sent something is reported as interrupted, never silently re-run —
// even when the app declares the sub-agent tool itself read-only (the CLI does: starting a
// sub-agent does nothing by itself, each of its calls meets the gate).
import { Agent, defineTool, type ToolPolicy } from '@agent/core';
import { CrashableRunJournal, createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createAgentTool } from './agent-tool.js';
import { createSubAgentTool } from './sub-agent-tool.js';
import { deferred, toolResults } from './test-helpers.js';

function recordingTool(
  name: string,
  permission: 'read-only' | 'workspace-write',
  effects: string[],
  started: () => void,
  block: boolean,
) {
  return defineTool({
    name,
    description: `records its calls (${name})`,
    input: z.object({ id: z.string() }),
    policy: { permission },
    execute: async ({ id }) => {
      effects.push(`${name}:${id}`);
      started();
      if (block) await new Promise(() => {});
      return `${name} did ${id}`;
    },
  });
}

/** A parent calls `helper`; its child calls `childTool` and the process dies while that runs. */
async function crashInChild(
  childPermission: 'read-only' | 'workspace-write',
  policy?: ToolPolicy,
  through: 'helper' | 'agent' = 'helper',
) {
  const journal = new CrashableRunJournal();
  const effects: string[] = [];
  const childStarted = deferred();
  const helper = (block: boolean) =>
    createSubAgentTool({
      name: 'helper',
      description: 'does a task',
      model: 'test-model',
      provider: createScriptedProvider([
        { toolCalls: [{ id: 'c1', name: 'act', arguments: { id: 'x' } }] },
        { text: 'child done' },
      ]),
      tools: [recordingTool('act', childPermission, effects, () => childStarted.resolve(), block)],
      ...(policy === undefined ? {} : { policy }),
    });
  const parentTool = (block: boolean) =>
    through === 'helper' ? helper(block) : createAgentTool({ agents: [helper(block)] });
  const call =
    through === 'helper'
      ? { id: 'h1', name: 'helper', arguments: { task: 'act on x' } }
      : { id: 'h1', name: 'agent', arguments: { description: 'act', prompt: 'act on x' } };
  const first = new Agent({
    model: 'test-model',
    provider: createScriptedProvider([{ toolCalls: [call] }, { text: 'never reached' }]),
    tools: [parentTool(true)],
    journal,
  });
  const run = first.run('go');
  await childStarted.promise;
  journal.crash();
  const before = [...effects];
  const resumed = new Agent({
    model: 'test-model',
    provider: createScriptedProvider([{ text: 'resumed' }]),
    tools: [parentTool(false)],
    journal: journal.inner,
  });
  const result = await resumed.run(undefined, { runId: run.runId }).result;
  expect(result.stopReason).toBe('completed');
  return {
    before,
    ranOnResume: effects.slice(before.length),
    helper: toolResults(resumed.messages).find((message) => message.toolCallId === 'h1'),
  };
}

describe('a sub-agent call interrupted by the death of its process', () => {
  it.each<[string, ToolPolicy | undefined]>([
    ['declared read-only by the app (as the CLI does)', { permission: 'read-only' }],
    ['with its default policy', undefined],
  ])('a child that writes, %s: reported as interrupted, not run again', async (_, policy) => {
    const outcome = await crashInChild('workspace-write', policy);
    expect(outcome.before).toEqual(['act:x']);
    expect(outcome.ranOnResume).toEqual([]);
    expect(outcome.helper?.errorKind).toBe('interrupted');
  });

  it('a child whose tools are all read-only simply runs again', async () => {
    const outcome = await crashInChild('read-only', { permission: 'read-only' });
    expect(outcome.ranOnResume).toEqual(['act:x']);
    expect(outcome.helper?.isError).toBeFalsy();
  });

  it('the agent tool over such a sub-agent: interrupted too', async () => {
    const outcome = await crashInChild('workspace-write', { permission: 'read-only' }, 'agent');
    expect(outcome.ranOnResume).toEqual([]);
    expect(outcome.helper?.errorKind).toBe('interrupted');
  });

  it("the app's own repeatable: true stands", async () => {
    const outcome = await crashInChild('workspace-write', {
      permission: 'read-only',
      repeatable: true,
    });
    expect(outcome.ranOnResume).toEqual(['act:x']);
  });
});
