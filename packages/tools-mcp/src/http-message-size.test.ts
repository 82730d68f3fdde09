// A Streamable HTTP server (a real process on 127.0.0.1) whose answer never ends: before, the SDK
// read it all into memory (1.5 GB within seconds, until the process died); now a message over
// maxMessageBytes ends the connection with an error naming the limit, the next call reconnects,
// and a long stream of small events is not cut.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { resultText, testContext } from './test-helpers.js';

const entry = fileURLToPath(new URL('./__fixtures__/endless-http-server.mjs', import.meta.url));
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startServer(): Promise<string> {
  const child: ChildProcess = spawn(process.execPath, [entry], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  cleanups.push(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  const port = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (text: string) => {
      output += text;
      const match = /listening on (\d+)/.exec(output);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    child.once('exit', () => reject(new Error(`server exited: ${output}`)));
  });
  return `http://127.0.0.1:${port}/mcp`;
}

async function connect(maxMessageBytes?: number) {
  const url = await startServer();
  const errors: string[] = [];
  const adapter = await McpToolAdapter.connect({
    name: 'endless',
    transport: { type: 'http', url, ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }) },
    onError: (error) => errors.push(error.message),
  });
  cleanups.push(() => adapter.close());
  const tool = (name: string) => {
    const found = adapter.tools().find((each) => each.name === `endless__${name}`);
    if (found === undefined) throw new Error(`no tool ${name}`);
    return found;
  };
  return { adapter, errors, tool };
}

const limitText = (bytes: number) =>
  `MCP server "endless" sent a message over the ${bytes}-byte limit; raise maxMessageBytes to accept it`;

describe('an HTTP server whose answer never ends', () => {
  it.each(['endless-json', 'endless-event'])(
    '%s: the call fails naming the limit, the next call reconnects',
    async (name) => {
      const { tool } = await connect(4 << 20);
      await expect(tool(name).execute({}, testContext())).rejects.toThrow(limitText(4 << 20));
      const again = await tool('small').execute({}, testContext());
      expect(resultText(again)).toBe('ok');
    },
  );

  it('the default limit (256 MiB) holds too', async () => {
    const { tool } = await connect();
    await expect(tool('endless-event').execute({}, testContext())).rejects.toThrow(
      limitText(256 * 1024 * 1024),
    );
  });

  it('a stream of many small events is counted event by event, not cut', async () => {
    // 3,000 events of ~1 kB: 3 MB in all, over a 1 MiB limit that no one event reaches.
    const { tool, errors } = await connect(1 << 20);
    const ctx = testContext();
    const result = await tool('many-events').execute({}, ctx);
    expect(resultText(result)).toBe('all events');
    expect(ctx.progress.length).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  });
});
