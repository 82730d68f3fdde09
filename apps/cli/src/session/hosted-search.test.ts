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

// Anthropic's documented stream for its server-side web search (the providers-anthropic fixture).
const stream = readFileSync(
  new URL(
    '../../../../packages/providers-anthropic/src/__fixtures__/web-search.sse',
    import.meta.url,
  ),
  'utf8',
)
  .split('\n')
  .filter((line) => !line.startsWith('#'))
  .join('\n')
  // An SSE event is dispatched at a blank line: the last one needs its own.
  .concat('\n\n');

describe('--hosted-web-search', () => {
  it("declares the provider's own web search and prints the answer's sources", async () => {
    const bodies: unknown[] = [];
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        bodies.push(JSON.parse(body));
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(stream);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    const dir = await tempDir('agent-cli-hosted-');
    cleanups.push(dir.dispose);
    const { code, stdout, stderr } = await runCli(
      [
        '-p',
        'When was Node 24 released?',
        '--provider',
        'anthropic',
        '--model',
        'claude-sonnet-4-5',
        '--hosted-web-search',
        '--cwd',
        dir.path,
      ],
      {
        env: cleanEnv({
          AGENT_HOME: join(dir.path, 'home'),
          ANTHROPIC_API_KEY: 'sk-test',
          ANTHROPIC_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        }),
      },
    );
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('Node.js 24 was released on May 6, 2025.');
    expect(stderr).toContain('Sources:');
    expect(stderr).toContain('Node.js 24 released — https://nodejs.org/en/blog/release/v24.0.0');
    const tools = (bodies[0] as { tools?: { type?: string; name?: string }[] }).tools ?? [];
    expect(tools.filter((tool) => tool.type === 'web_search_20250305')).toEqual([
      { type: 'web_search_20250305', name: 'web_search' },
    ]);
  });
});
