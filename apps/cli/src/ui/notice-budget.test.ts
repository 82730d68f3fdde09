// The terminal's budget for one server's notices: a burst, then a trickle, the rest counted.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { noticeBudget } from './notice-budget.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('noticeBudget', () => {
  it('lets a burst through, says once that it holds back, counts the rest and says the count', () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const say = noticeBudget((line) => lines.push(line), {
      source: 'mcp x',
      burst: 3,
      perSecond: 1,
    });
    for (let index = 0; index < 1000; index++) say(`line ${index}`);
    expect(lines).toEqual([
      'line 0',
      'line 1',
      'line 2',
      '… mcp x sends too many lines; the next are counted, not shown',
    ]);
    vi.advanceTimersByTime(1000);
    expect(lines.at(-1)).toBe('… 997 more line(s) from mcp x not shown');
    // Time refills the budget: the next line passes.
    vi.advanceTimersByTime(2000);
    say('later');
    expect(lines.at(-1)).toBe('later');
  });
});
