// The provider suite's tool-call cases (see provider-suite.ts): calls at the edges of a stream
// — interleaved, repeated ids, arguments that never close, a cut or a refusal mid-call, no name —
// and a saved conversation with such calls replayed. Imports vitest: for test files only.
import { describe, expect, it } from 'vitest';
import { collectEvents, SSE_HEADERS, startWireServer, type WireResponse } from './index.js';
import {
  type ProviderWireProfile,
  retry,
  type StreamedCall,
  type SuiteEvent,
  type SuiteProviderOptions,
  type Terminal,
} from './provider-suite.js';

/** What the cases use of the suite's per-profile helpers. */
export interface SuiteContext {
  run(
    options: Omit<SuiteProviderOptions, 'apiKey'> & { apiKey?: string | undefined },
  ): Promise<SuiteEvent[]>;
  answer(extra?: Partial<WireResponse>): WireResponse;
  settled(events: SuiteEvent[]): Terminal;
}

/** The tool-call cases against `profile`. */
export function describeToolCallCases(profile: ProviderWireProfile, context: SuiteContext): void {
  const { run, answer, settled } = context;
  describe(`${profile.name}: tool calls at the edges of the stream`, () => {
    const call = (id: string, key: string, name = 'lookup'): StreamedCall => ({
      id,
      name,
      pieces: ['{"key":', ` "${key}"}`],
    });
    const calls = (end: { message: { content: unknown[] } }) =>
      end.message.content.filter(
        (block): block is { type: 'toolCall'; id: string; name: string; arguments: string } =>
          (block as { type?: unknown }).type === 'toolCall',
      );
    const answerWith = async (body: string[]) => {
      const server = await startWireServer([{ headers: SSE_HEADERS, body }]);
      const end = settled(await run({ url: server.url, maxRetries: 2, retry }));
      return { end, server };
    };

    if (profile.streamsArguments)
      it('parallel calls whose pieces interleave: each call whole, in call order', async () => {
        const { end } = await answerWith(
          profile.toolCalls([call('call_a', 'a'), call('call_b', 'b')], {
            interleave: true,
            ending: 'complete',
          }),
        );
        expect(end.type).toBe('done');
        expect(end.message.stopReason).toBe('toolUse');
        expect(
          calls(end).map((block) => [block.id, block.name, JSON.parse(block.arguments)]),
        ).toEqual([
          ['call_a', 'lookup', { key: 'a' }],
          ['call_b', 'lookup', { key: 'b' }],
        ]);
      });

    it('two calls with one id: both kept, each with its own arguments (the loop gives them apart ids)', async () => {
      const { end } = await answerWith(
        profile.toolCalls([call('dup', 'a'), call('dup', 'b')], {
          interleave: false,
          ending: 'complete',
        }),
      );
      expect(end.type).toBe('done');
      expect(calls(end).map((block) => JSON.parse(block.arguments))).toEqual([
        { key: 'a' },
        { key: 'b' },
      ]);
    });

    if (profile.streamsArguments)
      it('arguments that never close in an answer that ends well: the call keeps its raw text', async () => {
        const { end } = await answerWith(
          profile.toolCalls([{ id: 'call_open', name: 'lookup', pieces: ['{"key": "a'] }], {
            interleave: false,
            ending: 'complete',
          }),
        );
        // A well-formed turn: the loop answers the call with an invalid-arguments result.
        expect(end.type).toBe('done');
        expect(calls(end).map((block) => block.arguments)).toEqual(['{"key": "a']);
      });

    it('the connection cut mid-call: one error, no half call kept, not retried after content', async () => {
      const { end, server } = await answerWith(
        profile.toolCalls(
          [call('call_a', 'a'), { id: 'call_cut', name: 'lookup', pieces: ['{"key": "b'] }],
          { interleave: false, ending: 'cut' },
        ),
      );
      expect(end.type).toBe('error');
      expect(calls(end).map((block) => block.id)).not.toContain('call_cut');
      // Content had streamed: the answer is not asked for again (its calls might run twice).
      expect(server.requests.length).toBeLessThanOrEqual(profile.streamsArguments ? 1 : 3);
    });

    it('a refusal or safety stop mid-call: one error saying so, not retried', async () => {
      const half = profile.streamsArguments ? '{"key": "a' : '{"key": "a"}';
      const { end, server } = await answerWith(
        // Cut mid-arguments where they stream; Gemini's arrive whole, then the safety stop.
        profile.toolCalls([{ id: 'call_r', name: 'lookup', pieces: [half] }], {
          interleave: false,
          ending: 'refused',
        }),
      );
      const error = (end as Terminal).error;
      expect(end.type).toBe('error');
      expect(error?.message).toMatch(/refus|content filter|SAFETY/);
      expect(error?.isRetryable).toBe(false);
      expect(server.requests).toHaveLength(1);
      // No half-written call is kept to be answered and sent back.
      for (const block of calls(end)) expect(() => JSON.parse(block.arguments)).not.toThrow();
    });

    it('a call without a name: an error naming it, or the call kept for the loop to answer', async () => {
      const { end } = await answerWith(
        profile.toolCalls([call('call_unnamed', 'a', '')], {
          interleave: false,
          ending: 'complete',
        }),
      );
      if (end.type === 'error') expect((end as Terminal).error?.message).toMatch(/name/);
      else expect(calls(end).map((block) => block.id)).toEqual(['call_unnamed']);
    });
  });

  describe(`${profile.name}: a saved conversation with odd tool calls replays`, () => {
    // A history as the agent loop leaves it: calls whose ids it made unique (dup, dup_2), a call
    // without a name renamed, arguments that never closed, another provider's opaque block, and
    // a failed turn whose finished call got a not-executed result.
    const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
    const assistant = (content: object[], stopReason = 'toolUse') => ({
      role: 'assistant',
      content,
      provider: 'elsewhere',
      model: 'other-model',
      usage,
      stopReason,
      timestamp: 1,
    });
    const toolCall = (id: string, name: string, args: string) => ({
      type: 'toolCall',
      id,
      name,
      arguments: args,
    });
    const result = (id: string, name: string, text: string, isError = false) => ({
      role: 'toolResult',
      toolCallId: id,
      toolName: name,
      content: [{ type: 'text', text }],
      isError,
      timestamp: 2,
    });
    const history = [
      { role: 'user', content: 'go', timestamp: 0 },
      assistant([
        { type: 'opaque', provider: 'elsewhere', data: { type: 'server_tool_use', id: 'srv_1' } },
        { type: 'text', text: 'Looking.' },
        toolCall('dup', 'lookup', '{"key":"a"}'),
        toolCall('dup_2', 'lookup', '{"key":"b"}'),
        toolCall('call_open', 'lookup', '{"key": "a'),
        toolCall('call_unnamed', 'unnamed_tool_call', '{}'),
      ]),
      result('dup', 'lookup', 'value of a'),
      result('dup_2', 'lookup', 'value of b'),
      result('call_open', 'lookup', 'Invalid arguments: not JSON', true),
      result('call_unnamed', 'unnamed_tool_call', 'Tool not found: unnamed_tool_call', true),
      assistant([toolCall('call_done', 'lookup', '{"key":"c"}')], 'error'),
      result('call_done', 'lookup', 'Not executed: the model call failed', true),
      { role: 'user', content: 'again', timestamp: 3 },
    ];

    it('every call id once, each result right after its call, no empty name', async () => {
      const server = await startWireServer([answer()]);
      const events = await collectEvents(
        profile
          .create({ url: server.url, apiKey: 'test-key', maxRetries: 0 })
          .stream({ model: profile.model, messages: history }),
      );
      expect(settled(events).type).toBe('done');
      const turns = profile.replayedTurns(server.requests[0]?.json);
      const ids = turns.flatMap((turn) => turn.calls.map((call) => call.id));
      expect(new Set(ids).size).toBe(ids.length);
      for (const turn of turns)
        for (const call of turn.calls) expect(call.name.trim()).not.toBe('');
      turns.forEach((turn, index) => {
        if (turn.results.length === 0) return;
        const before = turns[index - 1];
        expect(before?.role).toBe('assistant');
        expect(turn.results).toEqual(before?.calls.map((call) => call.id));
      });
      // The answered calls of the good turn all went back; nothing of the opaque block did.
      expect(ids).toEqual(expect.arrayContaining(['dup', 'dup_2', 'call_open', 'call_unnamed']));
      expect(JSON.stringify(server.requests[0]?.json)).not.toContain('srv_1');
    });
  });
}
