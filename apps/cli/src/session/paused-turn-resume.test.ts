// A turn Anthropic paused (pause_turn, its server web search running long), met by the CLI: the run
// carries on to the answer, the saved session keeps the server's blocks, and a resumed session
// sends them back as they came. Real CLI processes against a local server speaking the Messages
// API's documented stream.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

type Block = Record<string, unknown> & { type: string };

/** One streamed response of `blocks`, ending with `stopReason`. */
function response(blocks: Block[], stopReason: string): string {
  const events: Array<Record<string, unknown> & { type: string }> = [
    {
      type: 'message_start',
      message: {
        id: 'msg_p',
        type: 'message',
        role: 'assistant',
        content: [],
        model: 'claude-sonnet-4-6',
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 50, output_tokens: 1 },
      },
    },
  ];
  blocks.forEach((block, index) => {
    const start = block.type === 'text' ? { type: 'text', text: '' } : block;
    events.push({ type: 'content_block_start', index, content_block: start });
    if (block.type === 'text')
      events.push({
        type: 'content_block_delta',
        index,
        delta: { type: 'text_delta', text: block.text },
      });
    events.push({ type: 'content_block_stop', index });
  });
  events.push(
    {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 9 },
    },
    { type: 'message_stop' },
  );
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
}

const search: Block = {
  type: 'server_tool_use',
  id: 'srvtoolu_01',
  name: 'web_search',
  input: { query: 'node 24 release' },
};
const found: Block = {
  type: 'web_search_tool_result',
  tool_use_id: 'srvtoolu_01',
  content: [
    {
      type: 'web_search_result',
      title: 'Node.js 24',
      url: 'https://nodejs.org/en/blog/release/v24.0.0',
      encrypted_content: 'EqgfCioIARgBIiQ3YTAw',
      page_age: null,
    },
  ],
};

describe('a turn Anthropic paused (pause_turn)', () => {
  it('-p carries on to the answer; --resume sends the server blocks back as they came', async () => {
    const answers = [
      response([search, found], 'pause_turn'),
      response([{ type: 'text', text: 'Node 24 came out in May 2025.' }], 'end_turn'),
      response([{ type: 'text', text: 'You are welcome.' }], 'end_turn'),
    ];
    const bodies: Array<{ messages: Array<{ role: string; content: Block[] }> }> = [];
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        bodies.push(JSON.parse(body));
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(answers[Math.min(bodies.length - 1, answers.length - 1)]);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    const dir = await tempDir('agent-cli-paused-');
    cleanups.push(dir.dispose);
    const saved = join(dir.path, 'session.json');
    const env = cleanEnv({
      AGENT_HOME: join(dir.path, 'home'),
      ANTHROPIC_API_KEY: 'sk-test',
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    });
    const common = ['--provider', 'anthropic', '--hosted-web-search', '--cwd', dir.path];

    const first = await runCli(['-p', 'When was Node 24 released?', ...common, '--save', saved], {
      env,
    });
    expect(first.code, first.stderr).toBe(0);
    // Before: the run ended at the pause, with nothing to say.
    expect(first.stdout).toContain('Node 24 came out in May 2025.');
    expect(bodies).toHaveLength(2);
    expect(bodies[1]?.messages.at(-1)).toEqual({ role: 'assistant', content: [search, found] });
    const file = JSON.parse(readFileSync(saved, 'utf8')) as {
      messages: Array<{ role: string; content: unknown }>;
    };
    expect(JSON.stringify(file.messages)).toContain('"type":"opaque"');

    const second = await runCli(['-p', 'Thanks', ...common, '--resume', saved], { env });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('You are welcome.');
    expect(bodies).toHaveLength(3);
    const resumed = bodies[2]?.messages ?? [];
    expect(resumed[1]).toEqual({
      role: 'assistant',
      content: [search, found, { type: 'text', text: 'Node 24 came out in May 2025.' }],
    });
    expect(resumed.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'Thanks' }] });
  });
});
