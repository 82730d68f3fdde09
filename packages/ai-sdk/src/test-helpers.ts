// Test-only helpers shared by this package's test files (not exported from the package).
import type {
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';

/** One model turn of a script: text, then tool calls (input as an object, or raw text). */
export interface MockTurn {
  text?: string;
  toolCalls?: ReadonlyArray<{ id: string; name: string; input: unknown }>;
}

export const mockUsage: LanguageModelV4Usage = {
  inputTokens: { total: 12, noCache: 10, cacheRead: 2, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

function inputText(input: unknown): string {
  return typeof input === 'string' ? input : JSON.stringify(input);
}

/** A turn as the AI SDK's stream parts: text deltas, then each call's input in 8-character deltas. */
export function streamParts(turn: MockTurn): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  if (turn.text !== undefined) {
    parts.push({ type: 'text-start', id: 't1' });
    for (const word of turn.text.split(/(?<= )/))
      parts.push({ type: 'text-delta', id: 't1', delta: word });
    parts.push({ type: 'text-end', id: 't1' });
  }
  for (const call of turn.toolCalls ?? []) {
    const text = inputText(call.input);
    parts.push({ type: 'tool-input-start', id: call.id, toolName: call.name });
    for (let at = 0; at < text.length; at += 8) {
      parts.push({ type: 'tool-input-delta', id: call.id, delta: text.slice(at, at + 8) });
    }
    parts.push({ type: 'tool-input-end', id: call.id });
    parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: text });
  }
  const calls = (turn.toolCalls ?? []).length > 0;
  parts.push({
    type: 'finish',
    usage: mockUsage,
    finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: calls ? 'tool_calls' : 'stop' },
  });
  return parts;
}

function generated(turn: MockTurn): LanguageModelV4GenerateResult {
  const content: LanguageModelV4Content[] = [];
  if (turn.text !== undefined) content.push({ type: 'text', text: turn.text });
  for (const call of turn.toolCalls ?? []) {
    content.push({
      type: 'tool-call',
      toolCallId: call.id,
      toolName: call.name,
      input: inputText(call.input),
    });
  }
  const calls = (turn.toolCalls ?? []).length > 0;
  return {
    content,
    finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined },
    usage: mockUsage,
    warnings: [],
  };
}

/**
 * The AI SDK's own mock model (`ai/test`) answering from a script, turn by turn, in both modes
 * (`doGenerate` for `generateText`, `doStream` for `streamText` and our provider). It records
 * every call's options (`doGenerateCalls`, `doStreamCalls`).
 */
export function scriptedModel(turns: readonly MockTurn[]): MockLanguageModelV4 {
  let generateIndex = 0;
  let streamIndex = 0;
  const pick = (index: number): MockTurn => {
    const turn = turns[Math.min(index, turns.length - 1)];
    if (turn === undefined) throw new Error('scriptedModel: empty script');
    return turn;
  };
  return new MockLanguageModelV4({
    provider: 'mock',
    modelId: 'mock-model',
    doGenerate: async () => generated(pick(generateIndex++)),
    doStream: async () => ({
      stream: convertArrayToReadableStream(streamParts(pick(streamIndex++))),
    }),
  });
}
