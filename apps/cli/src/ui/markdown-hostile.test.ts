// An answer (the model's, perhaps steered by a page it read) with a long run of blanks inside:
// trimming the rendered text's end tried the run from each of its characters (quadratic: minutes
// for 200,000 blanks) before the REPL could print or notice Ctrl-C. A hang here is the failure.
import { describe, expect, it } from 'vitest';
import { createMarkdownRenderer } from './markdown.js';

describe('markdown rendering of a hostile answer', () => {
  it('a code block with 300,000 blanks inside a line', () => {
    const rendered = createMarkdownRenderer(80)(`\`\`\`\na${' '.repeat(300_000)}x\n\`\`\`\n\n\n`);
    expect(rendered.endsWith('x')).toBe(true);
    expect(rendered).toContain(' '.repeat(1000));
  });

  it('trailing blank lines still go', () => {
    expect(createMarkdownRenderer(80)('Hello\n\n\n')).toMatch(/Hello$/);
  });
});
