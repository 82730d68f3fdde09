import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import type { AgentEvent } from './agent-events.js';
import {
  type Compaction,
  chooseFirstKeptIndex,
  compactionSummaryPreamble,
  compactionSystemPrompt,
  filesTouched,
} from './compaction.js';
import { estimateRequestTokens } from './context-estimate.js';
import { isContextOverflowText } from './context-overflow.js';
import { defineTool } from './define-tool.js';
import { type Message, messageText, toolCallsOf, userMessage } from './messages.js';
import type { ProviderRequest } from './provider.js';
import { createScriptedProvider, type ScriptedTurn } from './testing/scripted-provider.js';
import { resultText, runToEnd, toolResults } from './testing/test-helpers.js';

/** A note of about 500 tokens whose first line names it. */
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

const requestText = (request: ProviderRequest) =>
  request.messages.map((message) => messageText(message)).join('\n');

/**
 * The model of a long session: reads notes 1…`notes` one call per turn, then answers; a summary
 * request gets a summary naming the notes it saw.
 */
function longSession(notes: number) {
  let worked = 0;
  const summaries: ProviderRequest[] = [];
  const step = (request: ProviderRequest): ScriptedTurn => {
    if (isSummaryRequest(request)) {
      summaries.push(request);
      const seen = [...requestText(request).matchAll(/note (\d+)\n/g)].map((match) => match[1]);
      return {
        text: `Summary ${summaries.length}: read notes ${[...new Set(seen)].join(',')}; open task: read the rest.`,
        usage: { input: 1_000, output: 40 },
      };
    }
    worked++;
    if (worked <= notes)
      return { toolCalls: [{ id: `read_${worked}`, name: 'read_note', arguments: { n: worked } }] };
    return { text: 'All notes read.' };
  };
  const provider = createScriptedProvider([step], { whenExhausted: 'repeat-last' });
  return { provider, summaries };
}

describe('compaction over a small window', () => {
  it('a long session completes: older turns summarised, the summary request and result checked, nothing stored lost', async () => {
    const window = 4_000;
    const { provider, summaries } = longSession(14);
    const agent = new Agent({
      provider,
      model: 'small-model',
      systemPrompt: 'You read notes.',
      tools: [readNote],
      compaction: { contextWindow: window, keepRecentTokens: 1_000 },
    });
    const { result, events } = await runToEnd(agent, 'Read notes 1 to 14.');

    expect(result.stopReason).toBe('completed');
    expect(messageText(result.finalMessage as Message)).toBe('All notes read.');
    // Stored history is whole: every result, word for word.
    const results = toolResults(agent.messages);
    expect(results).toHaveLength(14);
    expect(results.map(resultText)).toEqual(results.map((_, index) => note(index + 1)));
    expect(agent.messages[0]).toMatchObject({ role: 'user', content: 'Read notes 1 to 14.' });

    const ends = events.filter(
      (event): event is Extract<AgentEvent, { type: 'compaction-end' }> =>
        event.type === 'compaction-end',
    );
    expect(ends.length).toBeGreaterThanOrEqual(2);
    expect(
      ends.every((event) => event.reason === 'threshold' && event.runId === result.runId),
    ).toBe(true);
    expect(events.filter((event) => event.type === 'compaction-start')).toHaveLength(ends.length);
    expect(agent.compactions).toHaveLength(ends.length);
    // A span larger than one summary call can carry is summarised in pieces.
    expect(summaries.length).toBeGreaterThanOrEqual(ends.length);

    // The first summary request: the compaction prompt, no tools, the older turns as a transcript.
    const first = summaries[0] as ProviderRequest;
    expect(first.tools).toBeUndefined();
    expect(first.maxOutputTokens).toBeGreaterThan(0);
    expect(first.messages).toHaveLength(1);
    const firstText = messageText(first.messages[0] as Message);
    expect(firstText).toContain('<conversation>\nUser: Read notes 1 to 14.');
    expect(firstText).toContain('Assistant called read_note({"n":1})');
    expect(firstText).toContain('Result of read_note: note 1\n');
    expect(firstText).toContain('## Open tasks');
    expect(firstText).not.toContain('<earlier-summary>');
    // Later summaries merge the earlier one in.
    const second = messageText((summaries[1] as ProviderRequest).messages[0] as Message);
    expect(second).toContain('<earlier-summary>\nSummary 1: read notes 1,');

    const compaction = agent.compactions[0] as Compaction;
    expect(compaction.summary).toMatch(/^Summary \d+: read notes /);
    expect(compaction.files).toEqual({ read: [], modified: [] });
    expect(compaction.tokensAfter).toBeLessThan(compaction.tokensBefore);
    expect(compaction.usage.input % 1_000).toBe(0);
    // The summary calls are counted in the run's usage.
    expect(result.usage.input).toBe(1_000 * summaries.length);

    // Every request after the first compaction starts with the summary message and then the
    // stored messages from the first kept one on; none passes the window.
    const work = provider.requests.filter((request) => !isSummaryRequest(request));
    for (const request of work) expect(estimateRequestTokens(request)).toBeLessThanOrEqual(window);
    const compacted = (request: ProviderRequest) =>
      messageText(request.messages[0] as Message).startsWith(compactionSummaryPreamble);
    const firstSummaryAt = provider.requests.findIndex(isSummaryRequest);
    // Requests before the first compaction go out whole; the first one after it carries its summary.
    expect(work.slice(0, 3).some(compacted)).toBe(false);
    const after = provider.requests.find(
      (request, index) => index > firstSummaryAt && !isSummaryRequest(request),
    ) as ProviderRequest;
    const head = after.messages[0] as Message;
    expect(head.role).toBe('user');
    expect(compacted(after)).toBe(true);
    expect(messageText(head)).toContain(`<summary>\n${compaction.summary}\n</summary>`);
    const kept = after.messages.slice(1);
    const stored = agent.messages.slice(
      compaction.firstKeptIndex,
      compaction.firstKeptIndex + kept.length,
    );
    expect(kept.map((message) => message.role)).toEqual(stored.map((message) => message.role));
    expect(kept[0]?.role).not.toBe('toolResult');
  });

  it('what was sent is reproducible: a new agent given messages and compactions sends the same request', async () => {
    const { provider } = longSession(10);
    const agent = new Agent({
      provider,
      model: 'small-model',
      tools: [readNote],
      compaction: { contextWindow: 4_000, keepRecentTokens: 1_000 },
    });
    await runToEnd(agent, 'Read the notes.');
    const snapshot = JSON.parse(JSON.stringify(agent.toJSON())) as ReturnType<Agent['toJSON']>;
    expect(snapshot.compactions?.length).toBeGreaterThan(0);

    const lastWork = [...provider.requests].reverse().find((request) => !isSummaryRequest(request));
    const replay = createScriptedProvider([{ text: 'ok' }]);
    const restored = new Agent({
      provider: replay,
      model: 'small-model',
      tools: [readNote],
      messages: snapshot.messages.slice(0, -1),
      compactions: snapshot.compactions ?? [],
      compaction: false,
    });
    await runToEnd(restored);
    expect(replay.requests[0]?.messages).toEqual(lastWork?.messages);
  });

  it('rejects compactions that do not fit the conversation, naming the problem', () => {
    const provider = createScriptedProvider([]);
    const bad = { firstKeptIndex: 5, summary: 's', files: { read: [], modified: [] } };
    expect(
      () =>
        new Agent({
          provider,
          model: 'm',
          messages: [userMessage('hi')],
          compactions: [bad as unknown as Compaction],
        }),
    ).toThrow(/Invalid compaction at index 0: "firstKeptIndex" 5 is past the end/);
    expect(() => new Agent({ provider, model: 'm', compaction: { threshold: 1.5 } })).toThrow(
      /compaction.threshold must be in \(0, 1\]/,
    );
  });

  it('takes the window from the provider, and does nothing without one', async () => {
    const known = createScriptedProvider([{ text: 'ok' }], { contextWindow: 123_456 });
    expect(new Agent({ provider: known, model: 'm' }).contextUsage()).toMatchObject({
      contextWindow: 123_456,
      thresholdTokens: Math.floor(123_456 * 0.8),
      compactions: 0,
    });
    const unknown = createScriptedProvider([{ text: 'ok' }]);
    const agent = new Agent({
      provider: unknown,
      model: 'm',
      messages: [userMessage('x'.repeat(40_000))],
    });
    expect(agent.contextUsage()).toMatchObject({
      contextWindow: undefined,
      thresholdTokens: undefined,
    });
    const { events } = await runToEnd(agent);
    expect(events.some((event) => event.type === 'compaction-start')).toBe(false);
  });

  it('counts the last answer’s reported usage as the context, plus what came after', async () => {
    const provider = createScriptedProvider(
      [
        {
          toolCalls: [{ name: 'read_note', arguments: { n: 1 } }],
          usage: { input: 2_000, output: 100 },
        },
        { text: 'done' },
      ],
      { contextWindow: 100_000 },
    );
    const agent = new Agent({ provider, model: 'm', tools: [readNote] });
    const run = agent.run('go');
    await run.result;
    const usage = agent.contextUsage();
    // 2,100 reported, then the note's result (~500) and the final answer.
    expect(usage.tokens).toBeGreaterThan(2_100 + 400);
    expect(usage.tokens).toBeLessThan(2_100 + 800);
  });
});

describe('context overflow', () => {
  const overflowUntilCompacted = (answers: ScriptedTurn[]) => {
    const requests: ProviderRequest[] = [];
    const step = (request: ProviderRequest): ScriptedTurn => {
      requests.push(request);
      if (isSummaryRequest(request)) return { text: 'Summary: notes 1-3 were read.' };
      const compacted = messageText(request.messages[0] as Message).startsWith(
        compactionSummaryPreamble,
      );
      if (request.messages.length > 6 && !compacted)
        return {
          error: {
            message: 'prompt is too long: 250000 tokens > 200000 maximum',
            statusCode: 400,
            contextOverflow: true,
          },
        };
      return answers.shift() ?? { text: 'finished' };
    };
    return { provider: createScriptedProvider([step], { whenExhausted: 'repeat-last' }), requests };
  };

  it('compacts and retries the call once, and the run goes on', async () => {
    const turns: ScriptedTurn[] = [1, 2, 3, 4].map((n) => ({
      toolCalls: [{ id: `r${n}`, name: 'read_note', arguments: { n } }],
    }));
    const { provider, requests } = overflowUntilCompacted(turns);
    const agent = new Agent({ provider, model: 'm', tools: [readNote] });
    const { result, events } = await runToEnd(agent, 'Read four notes.');

    expect(result.stopReason).toBe('completed');
    expect(result.providerError).toBeUndefined();
    const kinds = events
      .filter((event) => event.type.startsWith('compaction'))
      .map((event) => `${event.type}:${(event as { reason: string }).reason}`);
    expect(kinds).toEqual(['compaction-start:overflow', 'compaction-end:overflow']);
    // The refused request, the summary, then the same turn sent again, compacted.
    const refused = requests.findIndex((request) => request.messages.length > 6);
    expect(isSummaryRequest(requests[refused + 1] as ProviderRequest)).toBe(true);
    const retried = requests[refused + 2] as ProviderRequest;
    expect(messageText(retried.messages[0] as Message)).toContain('Summary: notes 1-3 were read.');
    // The failed attempt is not kept: no error message in the conversation.
    expect(
      agent.messages.some(
        (message) => message.role === 'assistant' && message.stopReason === 'error',
      ),
    ).toBe(false);
    expect(toolResults(agent.messages)).toHaveLength(4);
    expect(result.turns).toBe(5);
  });

  it('without compaction the overflow ends the run with the typed error', async () => {
    const turns: ScriptedTurn[] = [1, 2, 3, 4].map((n) => ({
      toolCalls: [{ name: 'read_note', arguments: { n } }],
    }));
    const { provider } = overflowUntilCompacted(turns);
    const agent = new Agent({ provider, model: 'm', tools: [readNote], compaction: false });
    const { result } = await runToEnd(agent, 'Read four notes.');
    expect(result.stopReason).toBe('error');
    expect(result.providerError?.contextOverflow).toBe(true);
    expect(result.error).toContain('prompt is too long');
  });

  it('retries only once: a second overflow ends the run', async () => {
    let calls = 0;
    const provider = createScriptedProvider(
      [
        (request) => {
          calls++;
          if (isSummaryRequest(request)) return { text: 'Summary.' };
          if (request.messages.length < 4)
            return { toolCalls: [{ name: 'read_note', arguments: { n: calls } }] };
          return { error: { message: 'context_length_exceeded', contextOverflow: true } };
        },
      ],
      { whenExhausted: 'repeat-last' },
    );
    const agent = new Agent({ provider, model: 'm', tools: [readNote] });
    const { result, events } = await runToEnd(agent, 'go');
    expect(result.stopReason).toBe('error');
    expect(result.providerError?.contextOverflow).toBe(true);
    expect(events.filter((event) => event.type === 'compaction-end')).toHaveLength(1);
  });

  it('an overflow with nothing older to summarise ends the run without a summary call', async () => {
    const provider = createScriptedProvider([
      { error: { message: 'prompt is too long', statusCode: 400, contextOverflow: true } },
    ]);
    const agent = new Agent({ provider, model: 'm' });
    const { result, events } = await runToEnd(agent, 'x'.repeat(1_000));
    expect(result.stopReason).toBe('error');
    expect(provider.calls).toBe(1);
    expect(events.some((event) => event.type === 'compaction-start')).toBe(false);
  });

  it('a failing summary call ends the run with the original overflow error', async () => {
    const provider = createScriptedProvider([
      { toolCalls: [{ name: 'read_note', arguments: { n: 1 } }] },
      { toolCalls: [{ name: 'read_note', arguments: { n: 2 } }] },
      { error: { message: 'prompt is too long', statusCode: 400, contextOverflow: true } },
      { error: { message: 'overloaded', statusCode: 529 } },
    ]);
    const agent = new Agent({ provider, model: 'm', tools: [readNote] });
    const { result, events } = await runToEnd(agent, 'go');
    expect(result.stopReason).toBe('error');
    expect(result.providerError?.contextOverflow).toBe(true);
    const end = events.find((event) => event.type === 'compaction-end');
    expect(end).toMatchObject({ reason: 'overflow', error: expect.stringContaining('overloaded') });
    expect(agent.compactions).toHaveLength(0);
  });
});

describe('agent.compact()', () => {
  it('summarises on request with a focus, outside a run, with events to listeners', async () => {
    const provider = createScriptedProvider([
      { toolCalls: [{ name: 'read_note', arguments: { n: 1 } }] },
      { toolCalls: [{ name: 'read_note', arguments: { n: 2 } }] },
      { text: 'read both' },
      { text: 'Summary focused on note 2.' },
      { text: 'next answer' },
    ]);
    const agent = new Agent({ provider, model: 'm', tools: [readNote] });
    await runToEnd(agent, 'Read notes 1 and 2.');
    const seen: string[] = [];
    agent.subscribe((event) => {
      if (event.type.startsWith('compaction')) seen.push(event.type);
    });
    const outcome = await agent.compact({ focus: 'note 2' });
    expect(outcome.type).toBe('compacted');
    expect(seen).toEqual(['compaction-start', 'compaction-end']);
    const summaryRequest = provider.requests[3] as ProviderRequest;
    expect(messageText(summaryRequest.messages[0] as Message)).toContain(
      'The user asked the summary to focus on: note 2',
    );
    const compaction = agent.compactions[0] as Compaction;
    expect(compaction).toMatchObject({
      reason: 'manual',
      focus: 'note 2',
      files: { read: [], modified: [] },
    });
    // The newest turn (the final answer) is kept; everything before it is summarised.
    expect(compaction.firstKeptIndex).toBe(agent.messages.length - 1);
    await runToEnd(agent, 'And now?');
    const next = provider.requests[4] as ProviderRequest;
    expect(next.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(messageText(next.messages[0] as Message)).toContain('Summary focused on note 2.');
  });

  it('says when there is nothing to compact, and refuses during a run', async () => {
    const provider = createScriptedProvider([{ text: 'hi', delayMs: 5 }]);
    const agent = new Agent({ provider, model: 'm' });
    expect(await agent.compact()).toEqual({
      type: 'skipped',
      reason: 'nothing older than the newest turn to summarise',
    });
    const run = agent.run('hello');
    await expect(agent.compact()).rejects.toThrow(/while the agent is running/);
    await run.result;
  });
});

describe('chooseFirstKeptIndex', () => {
  const message = (role: Message['role']): Message =>
    role === 'user'
      ? userMessage('u')
      : role === 'assistant'
        ? {
            role,
            content: [],
            provider: 'p',
            model: 'm',
            usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
            stopReason: 'stop',
            timestamp: 0,
          }
        : { role, toolCallId: 'c', toolName: 't', content: [], isError: false, timestamp: 0 };

  it('never cuts at a tool result, always keeps the newest turn, and moves forward', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<Message['role']>('user', 'assistant', 'toolResult'), {
          minLength: 1,
          maxLength: 40,
        }),
        fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 40, maxLength: 40 }),
        fc.integer({ min: 0, max: 39 }),
        fc.integer({ min: 0, max: 3_000 }),
        (roles, sizes, fromSeed, keep) => {
          const messages = roles.map(message);
          const from = fromSeed % messages.length;
          const cut = chooseFirstKeptIndex(messages, from, keep, (index) => sizes[index] ?? 0);
          const newest = roles.findLastIndex(
            (role, index) => index > from && role !== 'toolResult',
          );
          if (newest === -1) return cut === undefined;
          if (cut === undefined) return false;
          return cut > from && cut <= newest && roles[cut] !== 'toolResult';
        },
      ),
    );
  });
});

describe('filesTouched', () => {
  const writer = defineTool({
    name: 'write_file',
    description: 'w',
    input: z.object({ path: z.string() }),
    policy: { pathAccess: 'write' },
    execute: async () => 'ok',
  });
  const lookup = (name: string) =>
    name === 'read_note' ? readNote : name === 'write_file' ? writer : undefined;
  const call = (id: string, name: string, args: unknown): Message => ({
    role: 'assistant',
    content: [{ type: 'toolCall', id, name, arguments: JSON.stringify(args) }],
    provider: 'p',
    model: 'm',
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
    stopReason: 'toolUse',
    timestamp: 0,
  });
  const result = (id: string, isError: boolean): Message => ({
    role: 'toolResult',
    toolCallId: id,
    toolName: 'x',
    content: [],
    isError,
    timestamp: 0,
  });

  it('lists read and modified paths of successful path-tool calls, merged with earlier ones', () => {
    const messages = [
      call('1', 'read_note', { path: 'a.ts' }),
      result('1', false),
      call('2', 'write_file', { path: 'a.ts' }),
      result('2', false),
      call('3', 'write_file', { path: 'failed.ts' }),
      result('3', true),
      call('4', 'unknown_tool', { path: 'nope.ts' }),
      result('4', false),
      call('5', 'read_note', { file_path: 'b.ts' }),
      result('5', false),
    ];
    expect(toolCallsOf(messages[0] as never)).toHaveLength(1);
    expect(filesTouched(messages, lookup, { read: ['old.md'], modified: ['c.ts'] })).toEqual({
      read: ['old.md', 'b.ts'],
      modified: ['c.ts', 'a.ts'],
    });
  });
});

describe('isContextOverflowText', () => {
  it.each([
    'prompt is too long: 213462 tokens > 200000 maximum',
    'input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length or `max_tokens` and try again',
    'Your input exceeds the context window of this model. Please adjust your input and try again.',
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.",
    'The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).',
    "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
    'Please reduce the length of the messages or completion.',
    'the request exceeds the available context size, try increasing it',
    'context_length_exceeded',
  ])('recognises %s', (text) => {
    expect(isContextOverflowText(text)).toBe(true);
  });

  it.each([
    'Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Requested 50000.',
    'Request too large for model in organization on tokens per minute (TPM): Limit 6000, Requested 7000, please reduce your message size and try again.',
    'Overloaded',
    'max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5',
    'invalid x-api-key',
    'messages.1.content.0.tool_result: unexpected tool_use_id',
  ])('does not mistake %s for an overflow', (text) => {
    expect(isContextOverflowText(text)).toBe(false);
  });
});
