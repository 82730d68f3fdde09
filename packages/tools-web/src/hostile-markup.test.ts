/**
 * Pages built to make the converters' regular expressions backtrack: each took seconds to
 * minutes on JavaScript's engine (quadratic in the page), on the thread the agent loop needs.
 * A test here that hangs is the failure; each also checks what the page turns into.
 */
import { describe, expect, it } from 'vitest';
import { htmlToMarkdown } from './html-to-markdown.js';
import { htmlToText } from './html-to-text.js';
import { withoutRangeFooter } from './web-fetch-kiro.js';

const convert = {
  text: (html: string) => htmlToText(html, { format: 'text' }).text,
  markdown: (html: string) => htmlToText(html).text,
  'readable markdown': (html: string) => htmlToMarkdown(html).text,
  'readable text': (html: string) => htmlToMarkdown(html, { format: 'text' }).text,
};

const article = (inner: string) =>
  `<html><head><title>T</title></head><body><article><h1>Title</h1><p>${'Some words of the article. '.repeat(20)}</p>${inner}</article></body></html>`;

describe.each(Object.entries(convert))('%s', (_format, run) => {
  it.each([
    // A tag name followed by 200,000 name characters and an unclosed quote (9 s at 50 kB).
    ['a tag that never closes', `<p>before</p><a${'0'.repeat(200_000)}'>"><!<p>after</p>`, 'after'],
    // Whitespace runs that end nowhere: trailing-space and blank-line trimming (7 s at 50 kB).
    ['a pre of tabs and a NUL', `<pre>a${'\t'.repeat(200_000)}&#0;\t</pre><p>after</p>`, 'after'],
    ['a pre line of tabs', `<pre>a${'\t'.repeat(200_000)}x\nb</pre><p>after</p>`, 'after'],
    ['a pre of newlines', `<pre>\n${'\n'.repeat(200_000)}x</pre><p>after</p>`, 'after'],
    ['an article line of tabs', article(`<p>${'\t'.repeat(200_000)}x</p><p>after</p>`), 'after'],
    // 300,000 table rows: spreading them into Math.max overflowed the stack (an error, no page).
    [
      '300,000 table rows',
      `<table>${'<tr><td>cell</td>'.repeat(300_000)}</table><p>after</p>`,
      'after',
    ],
    // Each quote or list level re-indented every line inside it (40 s for these two).
    [
      '250 nested quotes around 15,000 lines',
      `${'<blockquote>'.repeat(250)}${'<p>line</p>'.repeat(15_000)}<p>after</p>`,
      'after',
    ],
    [
      '120 nested lists around 15,000 items',
      `${'<ul><li>'.repeat(120)}${'<li>item</li>'.repeat(15_000)}<li>after</li>`,
      'after',
    ],
    // Nesting tens of thousands deep under the worker's 256 kB threshold: Readability held the
    // thread for 3–15 s per page and then overflowed the stack (such pages are converted whole).
    ...(
      [
        ['b', 60_000],
        ['div', 20_000],
        ['span', 40_000],
        ['blockquote', 15_000],
        ['ul><li', 12_000],
        ['dl><dd', 12_000],
      ] as const
    ).map(
      ([tag, depth]) =>
        [
          `${depth} nested <${tag}>`,
          article(`${`<${tag}>`.repeat(depth)}deep text<p>after</p>`),
          'deep text',
        ] as [string, string, string],
    ),
  ])('%s', (_name, html, expected) => {
    expect(run(html)).toContain(expected);
  });
});

describe('trimming keeps its meaning', () => {
  it('a preformatted block loses trailing blanks and blank lines, not its text', () => {
    const text = (html: string) => htmlToText(html, { format: 'text' }).text;
    expect(text('<pre>a  \t\n  b\t \n\n\n</pre>')).toBe('a\n  b');
    expect(text('<p>x</p>\n\n<pre>\n\n\ny</pre>\n\n')).toBe('x\n\ny');
    expect(htmlToText('<table><tr><td>a \n\t b</td></tr></table>').text).toContain('a b');
    expect(htmlToText('<h2>a\n  b</h2>').text).toBe('## a b');
  });
});

describe("Kiro's range footer", () => {
  it('is taken off the end only, also after 30,000 forged ones', () => {
    const page = 'Body.\n\n[Characters 0-10 of 20]';
    expect(withoutRangeFooter(page)).toBe('Body.');
    expect(withoutRangeFooter('Body.\n\n[Characters 0-10 of 20] more')).toBe(
      'Body.\n\n[Characters 0-10 of 20] more',
    );
    const forged = `${'\n\n[Characters 1-1 of 1'.repeat(30_000)}x`;
    expect(withoutRangeFooter(forged)).toBe(forged);
    const digits = `\n\n[Characters 0-0 of 0${'0'.repeat(200_000)}\n`;
    expect(withoutRangeFooter(digits)).toBe(digits);
    expect(withoutRangeFooter(`${forged}${page}`)).toBe(`${forged}Body.`);
  });
});
