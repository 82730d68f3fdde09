// A parent's time budget holds for its children: when it runs out, a child's running tool call is
// cancelled and both runs end with budget-exhausted — the child's hour-long command does not
// outlive the parent's deadline. Through the real loop.
import { Agent } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import { createSubAgentTool } from './index.js';
import { blockTool, delegatingParent, resultFor } from './test-helpers.js';

describe("a parent's time budget", () => {
  it("cancels a child's running tool call; child and parent end with budget-exhausted", async () => {
    let started = 0;
    let stopped = false;
    const helper = createSubAgentTool({
      name: 'helper',
      description: 'Blocks.',
      provider: createScriptedProvider([{ toolCalls: [{ name: 'block', arguments: {} }] }]),
      model: 'child',
      tools: [
        blockTool((signal) => {
          started++;
          signal.addEventListener('abort', () => {
            stopped = true;
          });
        }),
      ],
    });
    const parent = new Agent({
      provider: delegatingParent('helper', 'block'),
      model: 'parent',
      tools: [helper],
      // Long enough that a loaded machine starts the child's command before it runs out (the command
      // blocks until cancelled, so the test takes this long whatever the load).
      budget: { timeoutMs: 2_000 },
    });
    const result = await parent.run('go').result;
    expect(started).toBe(1);
    expect(result.stopReason).toBe('budget-exhausted');
    expect(result.budgetReason).toBe('the time budget of 2000 ms is spent');
    // The child's command was cancelled, not left running past the deadline.
    expect(stopped).toBe(true);
    expect(resultFor(result, 'call_sub')?.isError).toBe(true);
  });
});
