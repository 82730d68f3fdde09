import { Agent } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import { createSendUserMessageTool, createSleepTool } from './small-tools.js';
import { testContext } from './test-helpers.js';

describe('sleep', () => {
  it('waits, is bounded, and an abort ends it at once', async () => {
    const sleep = createSleepTool({ maxSeconds: 2 });
    const done = await sleep.execute({ seconds: 0.05 }, testContext());
    expect(done.details?.sleptMs).toBeGreaterThanOrEqual(45);
    expect(sleep.validate?.({ seconds: 3 }).ok).toBe(false);
    expect(sleep.validate?.({ seconds: -1 }).ok).toBe(false);
    const controller = new AbortController();
    const waiting = sleep.execute({ seconds: 2 }, testContext({ signal: controller.signal }));
    controller.abort();
    await expect(waiting).rejects.toThrow(/Cancelled/);
  });
});

describe('send_user_message', () => {
  it('reaches the app as an update and the model reads only that it was delivered', async () => {
    const provider = createScriptedProvider([
      { toolCalls: [{ name: 'send_user_message', arguments: { message: 'Halfway there.' } }] },
      { text: 'done' },
    ]);
    const shown: string[] = [];
    const agent = new Agent({
      provider,
      model: 'm',
      tools: [createSendUserMessageTool()],
      onEvent: (event) => {
        const message =
          event.type === 'tool-execution-update'
            ? (event.partial.details as { userMessage?: string } | undefined)?.userMessage
            : undefined;
        if (message !== undefined) shown.push(message);
      },
    });
    await agent.run('go').result;
    expect(shown).toEqual(['Halfway there.']);
    const result = agent.messages.find((message) => message.role === 'toolResult');
    expect(JSON.stringify(result?.content)).toBe(
      '[{"type":"text","text":"Delivered to the user."}]',
    );
  });
});
