// Compaction that does not help must not run again on every turn: a summary past its output
// limit (a server that ignores max tokens), a summary call that keeps failing, a summary no
// smaller than what it would stand in for.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import { compactionSystemPrompt } from './compaction.js';
import { defineTool } from './define-tool.js';
import { type Message, messageText } from './messages.js';
import type { ProviderRequest } from './provider.js';
import { createScriptedProvider, type ScriptedTurn } from './testing/scripted-provider.js';
import { runToEnd } from './testing/test-helpers.js';

/** A note of about 500 tokens. */
const note = (n: number) => `note ${n}\n${`line of note ${n} `.repeat(120)}`;
const readNote = defineTool({
  name: 'read_note',
  description: 'Reads a note',
  input: z.object({ n: z.number() }),
  policy: { permission: 'read-only', pathAccess: 'read' },
  execute: async ({ n }) => note(n),
});
const isSummaryRequest = (request: ProviderRequest) =>
  request.systemPrompt === compactionSystemPrompt;

/** A session reading `notes` notes one a turn; `summary` answers every summary call. */
function session(notes: number, summary: (request: ProviderRequest) => ScriptedTurn) {
  let worked = 0;
  const summaryRequests: ProviderRequest[] = [];
  const requests: ProviderRequest[] = [];
  const step = (request: ProviderRequest): ScriptedTurn => {
    if (isSummaryRequest(request)) {
      summaryRequests.push(request);
      return summary(request);
    }
    requests.push(request);
    worked++;
    if (worked <= notes)
      return { toolCalls: [{ id: `read_${worked}`, name: 'read_note', arguments: { n: worked } }] };
    return { text: 'All notes read.' };
  };
  const provider = createScriptedProvider([step], { whenExhausted: 'repeat-last' });
  return { provider, summaryRequests, requests };
}

const window = 8_000;
const compaction = { contextWindow: window, keepRecentTokens: 1_000 };

describe('a threshold compaction that does not help', () => {
  it('a summary past its output limit is cut to it, and is not written again every turn', async () => {
    // ~4,900 tokens where the limit is 2,000 (a quarter of the window).
    const { provider, summaryRequests, requests } = session(30, () => ({
      text: `Summary: ${'padding words '.repeat(1_500)}`,
    }));
    const agent = new Agent({ provider, model: 'm', tools: [readNote], compaction });
    const { result } = await runToEnd(agent, 'Read notes.');
    expect(result.stopReason).toBe('completed');
    const limit = summaryRequests[0]?.maxOutputTokens ?? 0;
    expect(limit).toBe(2_000);
    for (const made of agent.compactions)
      expect(made.summary.length).toBeLessThanOrEqual(limit * 4 + 100);
    // Before: 17 compactions in 31 turns, one nearly every turn (each a 4,900-token summary
    // standing in for a 500-token turn). A summary call may take several calls (chunks).
    expect(agent.compactions.length).toBeGreaterThanOrEqual(1);
    expect(agent.compactions.length).toBeLessThanOrEqual(5);
    // Nothing sent went past the window.
    for (const request of requests) {
      const characters = request.messages
        .map((message: Message) => messageText(message).length)
        .reduce((sum, length) => sum + length, 0);
      expect(characters / 4).toBeLessThan(window);
    }
  });

  it('a summary call that keeps failing is tried again only as the context grows', async () => {
    const { provider, summaryRequests } = session(30, () => ({
      error: { message: 'overloaded', statusCode: 529 },
    }));
    const agent = new Agent({ provider, model: 'm', tools: [readNote], compaction });
    const { result, events } = await runToEnd(agent, 'Read notes.');
    expect(result.stopReason).toBe('completed');
    // Before: 17 failed summary calls, one every turn past the threshold.
    expect(summaryRequests.length).toBeLessThanOrEqual(4);
    expect(summaryRequests.length).toBeGreaterThanOrEqual(1);
    const failures = events.filter(
      (event) => event.type === 'compaction-end' && event.error !== undefined,
    );
    expect(failures).toHaveLength(summaryRequests.length);
  });

  it('a summary that works again after failures is taken, and the waiting starts over', async () => {
    let calls = 0;
    const { provider, summaryRequests } = session(40, () => {
      calls++;
      return calls <= 2
        ? { error: { message: 'overloaded', statusCode: 529 } }
        : { text: `Summary ${calls}: notes read so far.` };
    });
    const agent = new Agent({ provider, model: 'm', tools: [readNote], compaction });
    const { result, events } = await runToEnd(agent, 'Read notes.');
    expect(result.stopReason).toBe('completed');
    const ends = events.filter((event) => event.type === 'compaction-end');
    expect(ends.filter((event) => event.error !== undefined)).toHaveLength(2);
    expect(agent.compactions.length).toBeGreaterThanOrEqual(2);
    expect(summaryRequests.length).toBeGreaterThan(2);
  });
});

describe('a summary larger than what it would stand in for', () => {
  it('is not used: the outcome says why and nothing is recorded', async () => {
    const provider = createScriptedProvider([
      { toolCalls: [{ name: 'read_note', arguments: { n: 1 } }] },
      { text: 'Read it.' },
      // ~1,250 tokens standing in for a ~520-token span.
      { text: `Summary: ${'long winded '.repeat(400)}` },
    ]);
    const agent = new Agent({ provider, model: 'm', tools: [readNote] });
    await runToEnd(agent, 'Read note 1.');
    const outcome = await agent.compact();
    expect(outcome).toMatchObject({
      type: 'failed',
      error: expect.stringMatching(/larger than what it would stand in for/),
    });
    expect(agent.compactions).toHaveLength(0);
  });
});
