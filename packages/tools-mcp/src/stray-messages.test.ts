// A server that sends what no client asked for — lines that are not JSON-RPC, progress for tokens
// it was never given, answers to requests never made, notifications that break their schema —
// costs a few reports, not one per message (20,000 terminal lines a second, each quoting the
// message whole). And a server that makes us answer (pings, unknown requests) but stopped reading
// its input is given up once the answers waiting for it pass maxMessageBytes, instead of piling
// up in our memory without end.
import { afterEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { nodeServer, resultText, strayMessagesServerEntry, testContext } from './test-helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function connect(options: { maxMessageBytes?: number } = {}) {
  const errors: Error[] = [];
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.message);
  process.on('warning', onWarning);
  const adapter = await McpToolAdapter.connect({
    name: 'stray',
    transport: nodeServer(strayMessagesServerEntry, [], options),
    onError: (error) => errors.push(error),
  });
  cleanups.push(async () => {
    process.off('warning', onWarning);
    await adapter.close();
  });
  const tool = (name: string) => {
    const found = adapter.tools().find((each) => each.name === `stray__${name}`);
    if (found === undefined) throw new Error(`no tool ${name}`);
    return found;
  };
  return { adapter, errors, warnings, tool };
}

describe('messages nobody asked for', () => {
  it.each([
    ['garbage', 'Ignored a line of MCP server stdout that is not JSON-RPC'],
    ['progress', 'Received a progress notification for an unknown token'],
    ['response', 'Received a response for an unknown message ID'],
    ['malformed', 'Uncaught error in notification handler'],
  ])(
    '20,000 of kind %s: a handful of short reports, counted; the call still answers',
    async (kind, text) => {
      const { errors, tool } = await connect();
      const result = await tool('stray').execute({ kind, count: 20_000 }, testContext());
      expect(resultText(result)).toBe('done');
      const reports = errors.map((error) => error.message);
      expect(reports.every((report) => report.includes(text))).toBe(true);
      // 3 in full, then the 10th, 100th, 1,000th and 10,000th.
      expect(reports).toHaveLength(7);
      expect(reports.at(-1)).toContain('10,000 like this so far');
      expect(Math.max(...reports.map((report) => report.length))).toBeLessThan(1_300);
      // A second call: the count goes on (no new full reports).
      await tool('stray').execute({ kind, count: 100 }, testContext());
      expect(errors).toHaveLength(7);
    },
  );

  it('kinds are counted apart: a new kind is still reported', async () => {
    const { errors, tool } = await connect();
    await tool('stray').execute({ kind: 'garbage', count: 50 }, testContext());
    await tool('stray').execute({ kind: 'progress', count: 2 }, testContext());
    const reports = errors.map((error) => error.message);
    expect(reports.filter((report) => report.includes('not JSON-RPC'))).toHaveLength(4);
    expect(reports.filter((report) => report.includes('unknown token'))).toHaveLength(2);
  });

  it.each(['log', 'request'])(
    '%s messages the client handles are not reported at all',
    async (kind) => {
      const { errors, warnings, tool } = await connect();
      const result = await tool('stray').execute({ kind, count: 5_000 }, testContext());
      expect(resultText(result)).toBe('done');
      expect(errors).toEqual([]);
      // Answering 5,000 requests at once must not stack a drain listener per answer.
      expect(warnings.filter((warning) => /MaxListeners/.test(warning))).toEqual([]);
    },
  );
});

describe('a server that stops reading its input', () => {
  it('is given up once more than maxMessageBytes wait for it; the call fails naming why', async () => {
    const { errors, tool } = await connect({ maxMessageBytes: 256 * 1024 });
    const error = await tool('stop-reading')
      .execute({ count: 40_000 }, testContext())
      .then(
        () => undefined,
        (caught: unknown) => caught as Error,
      );
    expect(error?.message).toMatch(/stopped reading its input: more than 262144 bytes wait/);
    expect(errors.map((each) => each.message).join('\n')).toContain('maxMessageBytes');
  });

  it('pings whose answers are small are counted too: given up past 10,000 waiting answers', async () => {
    // 60,000 answers of ~40 bytes are far below the default 256 MiB, yet each queued write held
    // kilobytes of this process (a server pinging without end grew it 30 MB a second).
    const { errors, tool } = await connect();
    const error = await tool('stop-reading')
      .execute({ count: 60_000 }, testContext())
      .then(
        () => undefined,
        (caught: unknown) => caught as Error,
      );
    expect(error?.message).toMatch(/stopped reading its input: more than 10,000 messages wait/);
    expect(errors.map((each) => each.message).join('\n')).toContain('10,000 messages');
  });
});

describe('a server that asks the user a flood of questions at once', () => {
  it('at most 4 are being answered at a time; the rest are refused with an error it reads', async () => {
    let running = 0;
    let most = 0;
    const asked: string[] = [];
    const adapter = await McpToolAdapter.connect({
      name: 'stray',
      transport: nodeServer(strayMessagesServerEntry),
      elicitation: async (params) => {
        asked.push(params.message);
        running++;
        most = Math.max(most, running);
        // Answered a moment later, as a user would: the others arrive meanwhile.
        await new Promise((resolve) => setTimeout(resolve, 20));
        running--;
        return { action: 'accept', content: {} };
      },
    });
    cleanups.push(() => adapter.close());
    const tool = adapter.tools().find((each) => each.name === 'stray__ask-many');
    const result = await tool?.execute({ count: 50 }, testContext());
    const counts = JSON.parse(result ? resultText(result) : '{}') as {
      accepted: number;
      refused: number;
    };
    expect(most).toBeLessThanOrEqual(4);
    expect(counts.accepted).toBe(asked.length);
    expect(counts.accepted + counts.refused).toBe(50);
    expect(counts.refused).toBeGreaterThanOrEqual(40);
  });
});
