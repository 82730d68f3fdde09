// A replayed result goes to the call it was recorded for, or to none. Its step is keyed by turn,
// index and call id; a journal edited since (or a catalogue that now resolves the call's name to
// another tool) could hand one call's result to another — the run must stop saying so, not go on
// with a conversation nobody had.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import { defineTool } from './define-tool.js';
import type { AssistantMessage, ToolResultMessage } from './messages.js';
import { PermissionPolicy } from './permissions.js';
import { MemoryRunJournal } from './run-journal.js';
import { createScriptedProvider } from './testing/scripted-provider.js';
import { toolResults } from './testing/test-helpers.js';
import type { AnyAgentTool } from './tool.js';

function tools(effects: string[]): AnyAgentTool[] {
  return ['pay', 'refund'].map((name) =>
    defineTool({
      name,
      description: `records its calls (${name})`,
      input: z.object({ id: z.string() }),
      execute: async ({ id }) => {
        effects.push(`${name}:${id}`);
        return `${name} did ${id}`;
      },
    }),
  );
}

/** Runs [pay c1] then an answer, forgets what came after the batch (a crash there), edits, resumes. */
async function resumeEdited(
  edit: (recorded: Map<string, { value?: unknown }>, forget: (key: string) => void) => void,
) {
  const journal = new MemoryRunJournal();
  const effects: string[] = [];
  const first = new Agent({
    model: 'test-model',
    provider: createScriptedProvider([
      { toolCalls: [{ id: 'c1', name: 'pay', arguments: { id: 'b' } }] },
      { text: 'paid' },
    ]),
    tools: tools(effects),
    // A gate, so each call's verdict is journaled too.
    permissionGate: new PermissionPolicy({ mode: 'full-access' }).gate,
    journal,
  });
  const done = await first.run('go').result;
  expect(done.stopReason).toBe('completed');
  journal.forget(done.runId, 'model-response/2');
  journal.forget(done.runId, 'run-end');
  edit(journal.entries(done.runId), (key) => journal.forget(done.runId, key));

  let modelCalls = 0;
  const provider = createScriptedProvider([{ text: 'resumed' }]);
  const again = new Agent({
    model: 'test-model',
    provider: {
      ...provider,
      stream: (request, options) => {
        modelCalls++;
        return provider.stream(request, options);
      },
    },
    tools: tools(effects),
    // A gate, so each call's verdict is journaled too.
    permissionGate: new PermissionPolicy({ mode: 'full-access' }).gate,
    journal,
  });
  const result = await again.run(undefined, { runId: done.runId }).result;
  return { result, effects, modelCalls, results: toolResults(again.messages) };
}

describe('a replayed result that was recorded for another call', () => {
  it('another tool under the same call id (the response edited): the run stops, naming it', async () => {
    const outcome = await resumeEdited((recorded) => {
      const message = recorded.get('model-response/1')?.value as { message: AssistantMessage };
      const call = message.message.content.find((block) => block.type === 'toolCall');
      if (call?.type === 'toolCall') call.name = 'refund';
    });
    expect(outcome.result.stopReason).toBe('error');
    expect(outcome.result.error).toContain('The run journal does not match this run');
    expect(outcome.result.error).toContain('another tool (pay, not refund)');
    // Nothing ran again, the model was not called, and no result says refund did anything.
    expect(outcome.effects).toEqual(['pay:b']);
    expect(outcome.modelCalls).toBe(0);
    expect(outcome.results.map((message) => message.content)).not.toContainEqual([
      { type: 'text', text: 'pay did b' },
    ]);
  });

  it('a result naming another call id: the run stops (the model never sees an answer to no call)', async () => {
    const outcome = await resumeEdited((recorded) => {
      const value = recorded.get('tool-result/1/0/c1')?.value as { message: ToolResultMessage };
      value.message.toolCallId = 'c9';
    });
    expect(outcome.result.stopReason).toBe('error');
    expect(outcome.result.error).toContain('another call id (c9)');
    expect(outcome.modelCalls).toBe(0);
    expect(outcome.results.map((message) => message.toolCallId)).toEqual(['c1']);
  });

  it('a refusal recorded for another call: this call is refused with its own result, not run', async () => {
    const outcome = await resumeEdited((recorded, forget) => {
      const result = recorded.get('tool-result/1/0/c1')?.value as { message: ToolResultMessage };
      // The verdict edited into a denial whose result answers another call; no result recorded.
      const decision = recorded.get('tool-decision/1/0/c1') as { value?: unknown };
      decision.value = { allowed: false, result: { ...result.message, toolCallId: 'c9' } };
      forget('tool-result/1/0/c1');
    });
    expect(outcome.effects).toEqual(['pay:b']);
    expect(outcome.results.map((message) => [message.toolCallId, message.errorKind])).toEqual([
      ['c1', 'denied'],
    ]);
  });

  it('the same call replays as before (the check refuses nothing it should take)', async () => {
    const outcome = await resumeEdited(() => {});
    expect(outcome.result.stopReason).toBe('completed');
    expect(outcome.effects).toEqual(['pay:b']);
    expect(outcome.modelCalls).toBe(1);
  });
});
