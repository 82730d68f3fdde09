// A run's time budget cancels what is running when it runs out — a tool call that would go on for
// an hour, a model stream that hangs — instead of waiting for the next model call to notice.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import { defineTool } from './define-tool.js';
import { createScriptedProvider } from './testing/index.js';

/** A tool that runs until its signal aborts, and says whether it saw the abort. */
function endless() {
  const seen = { aborted: false };
  const tool = defineTool({
    name: 'endless',
    description: 'Runs until cancelled.',
    input: z.object({}),
    execute: (_args, ctx) =>
      new Promise<string>((_resolve, reject) => {
        ctx.signal.addEventListener(
          'abort',
          () => {
            seen.aborted = true;
            reject(ctx.signal.reason);
          },
          { once: true },
        );
      }),
  });
  return { tool, seen };
}

const callEndless = { toolCalls: [{ name: 'endless', arguments: {} }] };

describe('budget.timeoutMs', () => {
  it('cancels a running tool call and ends the run with budget-exhausted', async () => {
    const { tool, seen } = endless();
    const agent = new Agent({
      provider: createScriptedProvider([callEndless, { text: 'never reached' }]),
      model: 'm',
      tools: [tool],
      budget: { timeoutMs: 100 },
    });
    const result = await agent.run('go').result;
    expect(result.stopReason).toBe('budget-exhausted');
    expect(result.budgetReason).toBe('the time budget of 100 ms is spent');
    expect(seen.aborted).toBe(true);
    const answer = result.messages.find((message) => message.role === 'toolResult');
    expect(answer).toMatchObject({ toolName: 'endless', isError: true });
  });

  it('cancels a model stream that hangs', async () => {
    const agent = new Agent({
      provider: createScriptedProvider([{ text: 'slow words', delayMs: 600_000 }]),
      model: 'm',
      budget: { timeoutMs: 100 },
    });
    const result = await agent.run('go').result;
    expect(result.stopReason).toBe('budget-exhausted');
    expect(result.budgetReason).toBe('the time budget of 100 ms is spent');
  });

  it('an abort before the deadline is still an abort', async () => {
    const { tool } = endless();
    const agent = new Agent({
      provider: createScriptedProvider([callEndless]),
      model: 'm',
      tools: [tool],
      budget: { timeoutMs: 600_000 },
    });
    const run = agent.run('go');
    agent.subscribe((event) => {
      if (event.type === 'tool-execution-start') run.abort();
    });
    expect((await run.result).stopReason).toBe('aborted');
  });

  it('a budget longer than a timer can hold does not fire at once', async () => {
    const agent = new Agent({
      provider: createScriptedProvider([{ text: 'done' }]),
      model: 'm',
      budget: { timeoutMs: 30 * 24 * 60 * 60 * 1000 },
    });
    const result = await agent.run('go').result;
    expect(result.stopReason).toBe('completed');
  });
});
