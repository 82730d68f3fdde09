// Links in a rendered answer show where they go. On a terminal that supports hyperlinks
// (detected from TERM_PROGRAM, VTE_VERSION, WT_SESSION…; FORCE_HYPERLINK=1 here) marked-terminal
// wrote OSC 8 hyperlinks whose visible text was the answer's: a link reading
// https://github.com/org/repo opened https://evil.example — and what the model writes is steered
// by the files and pages it read.
import { describe, expect, it } from 'vitest';

// supports-hyperlinks decides when it is first imported.
process.env.FORCE_HYPERLINK = '1';
const { createMarkdownRenderer } = await import('./markdown.js');
const render = createMarkdownRenderer(200);

describe('links in a rendered answer', () => {
  it.each([
    [
      'a link whose text is another address',
      'See [https://github.com/org/repo](https://evil.example/x).',
      'https://github.com/org/repo (https://evil.example/x)',
    ],
    [
      'a link with words',
      'Read [the docs](https://evil.example/docs).',
      'the docs (https://evil.example/docs)',
    ],
    [
      'a reference link',
      'Read [the release][r].\n\n[r]: https://evil.example/release',
      'the release (https://evil.example/release)',
    ],
    [
      'a link with a title',
      'Open [it](https://evil.example/t "GitHub").',
      'it (https://evil.example/t)',
    ],
    ['an autolink', 'Go to <https://a.example/path>.', 'https://a.example/path'],
    [
      'a target with percent-encoded escapes',
      'Open [it](https://evil.example/%1b]52;c;eA==%07).',
      'it (https://evil.example/%1b]52;c;eA==%07)',
    ],
  ])('%s: text and target shown, no hyperlink', (_label, markdown, shown) => {
    const output = render(markdown);
    expect(output).toContain(shown);
    expect(output).not.toContain('\u001b]8;');
  });
});
