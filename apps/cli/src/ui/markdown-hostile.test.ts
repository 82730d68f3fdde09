// An answer (the model's, perhaps steered by a page it read) that made rendering slow or throw
// before the REPL could print or notice Ctrl-C: a long run of blanks (the end trim tried it from
// each of its characters: ~20 s for 200,000), emphasis marked parses in quadratic time, nesting
// that overflows marked's stack. A hang here is the failure.
import { describe, expect, it } from 'vitest';
import { createMarkdownRenderer } from './markdown.js';

describe('markdown rendering of a hostile answer', () => {
  it('a code block with 31,000 blanks inside a line (longer answers are not rendered)', () => {
    const rendered = createMarkdownRenderer(80)(`\`\`\`\na${' '.repeat(31_000)}x\n\`\`\`\n\n\n`);
    expect(rendered.endsWith('x')).toBe(true);
    expect(rendered).toContain(' '.repeat(1000));
  });

  it('an answer whose emphasis parsing is quadratic is shown as written', () => {
    const answer = '_a'.repeat(80_000);
    expect(createMarkdownRenderer(80)(answer)).toBe(answer);
  });

  it('nesting deep enough to overflow marked is shown as written, not thrown', () => {
    for (const answer of [`${'> '.repeat(4000)}x`, `${'- '.repeat(4000)}x`])
      expect(createMarkdownRenderer(80)(answer)).toBe(answer);
  });

  it('trailing blank lines still go', () => {
    expect(createMarkdownRenderer(80)('Hello\n\n\n')).toMatch(/Hello$/);
  });
});
