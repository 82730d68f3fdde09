import { describe, expect, it } from 'vitest';
import { AgentError, ProviderError, ToolError } from './errors.js';
import { EventFanout } from './event-queue.js';
import { ResourceLocks } from './resource-locks.js';
import { clipText, clipToolResultMessage } from './result-budget.js';
import { abortableDelay, isRetryableStatus, retryDelayMs } from './retry.js';

describe('errors', () => {
  it('brands errors so checks survive duplicated installs', () => {
    const error = new ToolError('x', { kind: 'timeout', toolName: 't' });
    expect(ToolError.isInstance(error)).toBe(true);
    expect(AgentError.isInstance(error)).toBe(true);
    expect(ProviderError.isInstance(error)).toBe(false);
    // A structurally branded object from "another copy" of the package.
    const foreign = Object.assign(new Error('y'), { [Symbol.for('agent.error.ToolError')]: true });
    expect(ToolError.isInstance(foreign)).toBe(true);
    expect(ToolError.isInstance(new Error('z'))).toBe(false);
    expect(ToolError.isInstance(null)).toBe(false);
  });

  it('uses the seed messages', () => {
    expect(ToolError.notFound('x').message).toBe('Tool not found: x.');
    expect(ToolError.invalidArguments('t', 'bad').message).toBe('Invalid arguments: bad');
    expect(ToolError.cancelled().message).toBe('Cancelled');
    expect(ToolError.timeout('t', 5).message).toBe('Tool exceeded timeout of 5 ms');
    expect(ToolError.denied('t', 'no').kind).toBe('denied');
  });
});

describe('clipText', () => {
  it('keeps head 3/4 and tail 1/4 with one marker', () => {
    const text = `${'a'.repeat(50)}${'b'.repeat(50)}`;
    expect(clipText(text, 20)).toBe(
      `${'a'.repeat(15)}\n[… 80 of 100 characters clipped …]\n${'b'.repeat(5)}`,
    );
    expect(clipText(text, 100)).toBe(text);
    expect(clipText(text, Number.POSITIVE_INFINITY)).toBe(text);
  });

  it('clips the text of a tool result as a whole and keeps images', () => {
    const message = clipToolResultMessage(
      {
        role: 'toolResult',
        toolCallId: '1',
        toolName: 't',
        isError: false,
        timestamp: 0,
        content: [
          { type: 'text', text: 'x'.repeat(30) },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'text', text: 'y'.repeat(30) },
        ],
      },
      20,
    );
    expect(message.content).toHaveLength(2);
    expect(message.content[1]).toEqual({ type: 'image', data: 'AAAA', mimeType: 'image/png' });
  });
});

describe('ResourceLocks', () => {
  it('serialises holders of one key in arrival order and frees the key', async () => {
    const locks = new ResourceLocks();
    const order: string[] = [];
    const first = await locks.acquire('k');
    const second = locks.acquire('k').then((release) => {
      order.push('second');
      release();
    });
    const other = await locks.acquire('other');
    order.push('other');
    other();
    order.push('first');
    first();
    await second;
    expect(order).toEqual(['other', 'first', 'second']);
    expect(locks.size).toBe(0);
  });

  it('gives up the place in line when the signal aborts', async () => {
    const locks = new ResourceLocks();
    const held = await locks.acquire('k');
    const controller = new AbortController();
    const waiting = locks.acquire('k', controller.signal);
    controller.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
    const third = locks.acquire('k');
    held();
    const release = await third;
    release();
    expect(locks.size).toBe(0);
  });
});

describe('EventFanout', () => {
  it('gives each iterator the events pushed after it attached, and ends them on close', async () => {
    const fanout = new EventFanout<number>();
    const drain = async (iterable: AsyncIterable<number>) => {
      const seen: number[] = [];
      for await (const n of iterable) seen.push(n);
      return seen;
    };
    const early = drain(fanout);
    fanout.push(1);
    const middleIterator = fanout[Symbol.asyncIterator]();
    fanout.push(2);
    fanout.close();
    fanout.push(3);
    const middle: number[] = [];
    for (
      let next = await middleIterator.next();
      next.done !== true;
      next = await middleIterator.next()
    )
      middle.push(next.value);
    expect(await early).toEqual([1, 2]);
    expect(middle).toEqual([2]);
    expect(await drain(fanout)).toEqual([]);
  });

  it('stops buffering for an iterator that returned early', async () => {
    const fanout = new EventFanout<number>();
    const iterator = fanout[Symbol.asyncIterator]();
    fanout.push(1);
    await iterator.return?.();
    fanout.push(2);
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
  });
});

describe('retry helpers', () => {
  it('knows which statuses to retry', () => {
    expect([408, 409, 429, 500, 503, 529].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 422, undefined].some(isRetryableStatus)).toBe(false);
  });

  it('honours retry-after-ms, retry-after seconds and dates, capped, ignoring junk', () => {
    const fixed = { random: () => 0.5, now: () => Date.parse('2026-01-01T00:00:00Z') };
    expect(retryDelayMs(0, { 'retry-after-ms': '250' }, fixed)).toBe(250);
    expect(retryDelayMs(0, new Headers({ 'retry-after': '1' }), fixed)).toBe(1000);
    expect(retryDelayMs(0, { 'retry-after': '600' }, fixed)).toBe(60_000);
    expect(retryDelayMs(0, { 'retry-after': 'Thu, 01 Jan 2026 00:00:02 GMT' }, fixed)).toBe(2000);
    expect(retryDelayMs(0, { 'retry-after': 'soon' }, fixed)).toBe(375);
    expect(retryDelayMs(0, { 'retry-after': '-1' }, fixed)).toBe(375);
    expect(retryDelayMs(0, { 'retry-after': 'try 2031' }, fixed)).toBe(375);
    expect(retryDelayMs(0, { 'retry-after-ms': '12abc' }, fixed)).toBe(375);
    expect(retryDelayMs(0, { 'retry-after-ms': '0', 'retry-after': '5' }, fixed)).toBe(0);
    expect(retryDelayMs(0, { 'retry-after': '0' }, fixed)).toBe(0);
    expect(retryDelayMs(0, { 'retry-after': 'Thursday, 01-Jan-26 00:00:03 GMT' }, fixed)).toBe(
      3000,
    );
    expect(retryDelayMs(3, undefined, fixed)).toBe(3000);
    expect(retryDelayMs(10, undefined, { random: () => 0.999 })).toBeLessThanOrEqual(8000);
  });

  it('abortableDelay rejects at once on abort', async () => {
    const controller = new AbortController();
    const delay = abortableDelay(60_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(delay).rejects.toThrow('stop');
  });
});

describe('provider helpers', () => {
  it('computes cost from prices per million tokens', async () => {
    const { withCost } = await import('./model-pricing.js');
    const usage = {
      input: 1_000_000,
      output: 500_000,
      cacheRead: 2_000_000,
      cacheWrite: 0,
      totalTokens: 3_500_000,
    };
    expect(
      withCost(usage, { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }).cost,
    ).toEqual({
      input: 3,
      output: 7.5,
      cacheRead: 0.6,
      cacheWrite: 0,
      total: 11.1,
    });
    expect(withCost(usage, undefined)).toBe(usage);
  });

  it('finds models by exact id or the longest dated prefix', async () => {
    const { findModelByPrefix } = await import('./model-pricing.js');
    const catalogue = [{ id: 'claude-sonnet-4' }, { id: 'claude-sonnet-4-5' }];
    expect(findModelByPrefix(catalogue, 'claude-sonnet-4-5-20250929')?.id).toBe(
      'claude-sonnet-4-5',
    );
    expect(findModelByPrefix(catalogue, 'claude-sonnet-4')?.id).toBe('claude-sonnet-4');
    expect(findModelByPrefix(catalogue, 'claude-sonnet-40')).toBeUndefined();
  });

  it('recognises connection failures through causes', async () => {
    const { isConnectionFailure } = await import('./connection-errors.js');
    expect(isConnectionFailure(new TypeError('terminated'))).toBe(true);
    expect(
      isConnectionFailure(
        new Error('wrapped', { cause: Object.assign(new Error('x'), { code: 'ECONNRESET' }) }),
      ),
    ).toBe(true);
    expect(isConnectionFailure(new Error('bad request'))).toBe(false);
  });
});
