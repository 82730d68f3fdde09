import { afterEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { defineTool } from './define-tool.js';
import { executeTool } from './execute-tool.js';

// Calls a framework runs through `executeTool` each come in a batch of their own; those that arm
// the same timeout together still share one timer, and each still times out on its own terms.
function timers(): number {
  return process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
}

const waiting = defineTool({
  name: 'wait',
  description: 'waits for its signal',
  input: z.object({ id: z.string() }),
  policy: { timeoutMs: 50 },
  execute: (_args, ctx) =>
    new Promise<string>((_, reject) => {
      ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
    }),
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('executeTool: timeouts across separate calls', () => {
  it('eight calls started together run on one timer, and each times out', async () => {
    // "Together" is within half a millisecond: a frozen clock keeps a loaded machine from
    // spreading the calls over more than one window.
    const now = performance.now();
    const clock = vi.spyOn(performance, 'now').mockReturnValue(now);
    const before = timers();
    const running = Array.from({ length: 8 }, (_, index) =>
      executeTool(waiting, { id: String(index) }, { toolCallId: `c${index}`, abortGraceMs: 0 }),
    );
    // Every call is past its gate and running once its timer is armed (a microtask later).
    await new Promise((resolve) => setImmediate(resolve));
    expect(timers() - before).toBe(1);
    clock.mockRestore();
    const results = await Promise.all(running);
    expect(results.map((result) => [result.isError, result.errorKind])).toEqual(
      Array.from({ length: 8 }, () => [true, 'timeout']),
    );
    // None of ours is left (another module's timer counted in `before` may have fired meanwhile).
    expect(timers()).toBeLessThanOrEqual(before);
  });

  it('a call started after the shared timer’s window gets its whole timeout', async () => {
    const first = executeTool(waiting, { id: 'a' }, { toolCallId: 'a', abortGraceMs: 0 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const startedLater = performance.now();
    const second = await executeTool(waiting, { id: 'b' }, { toolCallId: 'b', abortGraceMs: 0 });
    expect(second.errorKind).toBe('timeout');
    // Not cut short by the first call's timer, which fired ~30 ms into this one.
    expect(performance.now() - startedLater).toBeGreaterThanOrEqual(45);
    expect((await first).errorKind).toBe('timeout');
  });
});
