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

describe('a conversation far past the window, never compacted (a long session resumed)', () => {
  /** `turns` file reads of ~10,000 tokens each, as a session saved without compaction holds. */
  function savedSession(turns: number): Message[] {
    const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
    const messages: Message[] = [
      { role: 'user', content: 'Goal: read every part and report the largest.', timestamp: 0 },
    ];
    for (let turn = 0; turn < turns; turn++) {
      messages.push(
        {
          role: 'assistant',
          content: [{ type: 'toolCall', id: `c${turn}`, name: 'read_note', arguments: '{}' }],
          provider: 'p',
          model: 'm',
          usage,
          stopReason: 'toolUse',
          timestamp: 0,
        },
        {
          role: 'toolResult',
          toolCallId: `c${turn}`,
          toolName: 'read_note',
          content: [{ type: 'text', text: `part ${turn}\n${'words '.repeat(6_600)}` }],
          isError: false,
          timestamp: 0,
        },
      );
    }
    return messages;
  }

  it('is summarised from its opening and newest part in a few calls, saying what was left out', async () => {
    const summaryRequests: ProviderRequest[] = [];
    const provider = createScriptedProvider(
      [
        (request: ProviderRequest): ScriptedTurn => {
          if (!isSummaryRequest(request)) return { text: 'Going on.' };
          summaryRequests.push(request);
          return { text: `Summary ${summaryRequests.length}.` };
        },
      ],
      { whenExhausted: 'repeat-last' },
    );
    const agent = new Agent({
      provider,
      model: 'm',
      tools: [readNote],
      messages: savedSession(1_000),
      compaction: { contextWindow: 200_000 },
    });
    const { result } = await runToEnd(agent, 'go on');
    expect(result.stopReason).toBe('completed');
    expect(agent.compactions).toHaveLength(1);
    // Before: 56 summary calls, ~7.5 million tokens read.
    expect(summaryRequests.length).toBeLessThanOrEqual(6);
    const read = summaryRequests.map((request) => messageText(request.messages[0] as Message));
    expect(read[0]).toContain('Goal: read every part and report the largest.');
    expect(read.join('\n')).toMatch(/\[\d+ messages \(~\d+ tokens\) between these were left out/);
    // The newest part is read: the last read before the kept turns.
    const kept = agent.compactions[0]?.firstKeptIndex ?? 0;
    const lastSummarised = agent.messages[kept - 1] as Message;
    expect(read.join('\n')).toContain(messageText(lastSummarised).slice(0, 12));
  });
});
