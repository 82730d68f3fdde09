import { describe, expect, it } from 'vitest';
import { runExample } from './demo.js';

describe('library example', () => {
  it('runs its own tool and two built-ins under a policy, and reports the bad argument', async () => {
    const lines: string[] = [];
    const { result, messages, summary } = await runExample((line) => lines.push(line));
    expect(result.stopReason).toBe('completed');
    expect(summary).toBe('9 words.\n');
    const results = messages.filter((message) => message.role === 'toolResult');
    expect(results.map((message) => [message.toolName, message.isError])).toEqual([
      ['read_file', false],
      ['word_count', false],
      ['word_count', true],
      ['write_file', false],
    ]);
    expect(JSON.stringify(results[1]?.content)).toContain('9 words');
    expect(JSON.stringify(results[2]?.content)).toContain('at \\"text\\": expected string');
    expect(lines.at(-1)).toBe('stop reason: completed');
  });
});
