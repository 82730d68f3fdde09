// A chat app on the AI SDK sends each tool result to the browser (`toUIMessageStream`) and, next
// turn, back to the model through `convertToModelMessages` — often without the `tools` that carry
// our `toModelOutput`. What leaves the process must then already be what the model may read: the
// text clipped to the budget and no `details` (the HTTP exchange, a command's bookkeeping).
import { defineTool, type ToolResultMessage } from '@agent/core';
import {
  convertToModelMessages,
  isStepCount,
  readUIMessageStream,
  streamText,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { toAiSdkTools } from './ai-sdk-tools.js';
import { scriptedModel } from './test-helpers.js';

const whole = `${'a'.repeat(3000)}${'z'.repeat(1000)}`;

function bigTool() {
  return defineTool({
    name: 'big',
    description: 'A long output',
    input: z.object({}),
    policy: { maxResultChars: 100 },
    execute: async () => ({
      content: [{ type: 'text', text: whole }],
      details: { url: 'https://api.example.com/v1?key=[masked]', internal: 'not-for-the-model' },
    }),
  });
}

/** One streamText turn as a chat route runs it; the assistant's UI message it streamed. */
async function chatTurn() {
  const tools = toAiSdkTools([bigTool()]);
  const model = scriptedModel([
    { toolCalls: [{ id: 'c1', name: 'big', input: {} }] },
    { text: 'ok' },
  ]);
  const result = streamText({ model, tools, prompt: 'x', stopWhen: isStepCount(3) });
  // The route's response as the browser reads it: server-sent events of JSON chunks.
  const events = await result.toUIMessageStreamResponse().text();
  const chunks = events
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice('data: '.length)) as UIMessageChunk);
  let assistant: UIMessage | undefined;
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  for await (const message of readUIMessageStream({ stream })) assistant = message;
  if (assistant === undefined) throw new Error('no UI message');
  const steps = await result.steps;
  return { tools, assistant, steps };
}

/** The tool results the model would read next turn, from the UI messages. */
async function nextTurnToolResults(assistant: UIMessage, options?: { tools: object }) {
  const ui: UIMessage[] = [
    { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'x' }] },
    // As the browser sends it back.
    JSON.parse(JSON.stringify(assistant)) as UIMessage,
    { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'again' }] },
  ];
  const messages = await convertToModelMessages(ui, options as never);
  return JSON.stringify(
    messages.filter((message) => message.role === 'tool').map((message) => message.content),
  );
}

describe('toAiSdkTools: results that leave the process', () => {
  it.each([
    ['without tools', false],
    ['with tools', true],
  ])(
    'convertToModelMessages %s: the model reads the clipped text, no details',
    async (_l, withTools) => {
      const { tools, assistant } = await chatTurn();
      const sent = await nextTurnToolResults(assistant, withTools ? { tools } : undefined);
      expect(sent).toContain('[… 3900 of 4000 characters clipped …]');
      expect(sent).not.toContain('a'.repeat(200));
      expect(sent).not.toContain('not-for-the-model');
      expect(sent.length).toBeLessThan(1000);
    },
  );

  it('the browser gets the clipped result; the steps in the process keep the whole one', async () => {
    const { assistant, steps } = await chatTurn();
    const streamed = JSON.stringify(assistant.parts);
    expect(streamed).toContain('characters clipped');
    expect(streamed).not.toContain('not-for-the-model');
    const output = steps[0]?.toolResults[0]?.output as ToolResultMessage;
    expect(output.content).toEqual([{ type: 'text', text: whole }]);
    expect(output.details).toMatchObject({ internal: 'not-for-the-model' });
  });
});
