import { describe, expect, it } from 'vitest';
import { runDemo } from './demo.js';

describe('offline demo', () => {
  it('completes, edits the real file, refuses the escape and reports the malformed call', async () => {
    const lines: string[] = [];
    const { result, messages, notes } = await runDemo({ write: (line) => lines.push(line) });
    expect(result.stopReason).toBe('completed');
    expect(notes).toContain('greet() now says hello');
    const results = messages.filter((m) => m.role === 'toolResult');
    expect(results).toHaveLength(9);
    const byName = (name: string) => results.filter((m) => m.toolName === name);
    expect(byName('edit_file')[0]?.isError).toBe(false);
    const bash = byName('bash')[0];
    expect(bash?.isError).toBe(false);
    expect(JSON.stringify(bash?.content)).toContain('check passed');
    const reads = byName('read_file');
    expect(reads.map((m) => m.isError)).toEqual([false, true, true]);
    expect(JSON.stringify(reads[2]?.content)).toContain('Invalid arguments');
    expect(lines.join('\n')).toContain('stop reason: completed');
  });
});
