// Test support: a local server that speaks Anthropic's Messages stream, answers with scripted
// turns and keeps every request body — what the model was sent, to look for credentials in.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted assistant turn: a tool call or a text answer. */
export type Turn = { tool: { name: string; input: Record<string, unknown> } } | { text: string };

/** Anthropic's first event of an assistant turn, `message_start`. */
function messageStart(at: number): [string, unknown] {
  return [
    'message_start',
    {
      type: 'message_start',
      message: {
        id: `msg_${at}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-6',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 },
      },
    },
  ];
}

const serverSentEvents = (events: readonly [string, unknown][]) =>
  events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join('');

/** A text block's start, and `text` as its one delta. */
function textBlockStart(text: string): [string, unknown][] {
  return [
    [
      'content_block_start',
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ],
    [
      'content_block_delta',
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
    ],
  ];
}

/**
 * The start of a turn that stops short: `message_start`, then (unless `text` is undefined) a text
 * block begun with `text` as its first delta — no end, no `message_stop`.
 */
export function cutOffTurnEvents(text: string | undefined): string {
  const events: [string, unknown][] = [messageStart(1)];
  if (text !== undefined) events.push(...textBlockStart(text));
  return serverSentEvents(events);
}

/** Anthropic's documented server-sent events for one assistant turn. */
function turnEvents(turn: Turn, at: number): string {
  const events: [string, unknown][] = [messageStart(at)];
  if ('tool' in turn) {
    events.push(
      [
        'content_block_start',
        {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: `toolu_${at}`, name: turn.tool.name, input: {} },
        },
      ],
      [
        'content_block_delta',
        {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(turn.tool.input) },
        },
      ],
    );
  } else events.push(...textBlockStart(turn.text));
  events.push(
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    [
      'message_delta',
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool' in turn ? 'tool_use' : 'end_turn', stop_sequence: null },
        usage: { output_tokens: 5 },
      },
    ],
    ['message_stop', { type: 'message_stop' }],
  );
  return serverSentEvents(events);
}

/**
 * A Messages server that answers with `turns` in order and keeps each request body as text, and
 * the key each request came with (`x-api-key`, or a bearer `Authorization`).
 */
export async function messagesServer(
  turns: readonly Turn[],
  cleanups: (() => Promise<void>)[],
): Promise<{ url: string; bodies: string[]; apiKeys: string[] }> {
  const bodies: string[] = [];
  const apiKeys: string[] = [];
  const server = createServer((request, response) => {
    const bearer = request.headers.authorization?.replace(/^Bearer /, '');
    apiKeys.push(String(request.headers['x-api-key'] ?? bearer ?? ''));
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      bodies.push(body);
      const turn = turns[bodies.length - 1] ?? { text: 'done' };
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(turnEvents(turn, bodies.length));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, apiKeys };
}
