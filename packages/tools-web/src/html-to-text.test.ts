import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeHtmlEntities } from './html-entities.js';
import { htmlToText } from './html-to-text.js';

describe('htmlToText', () => {
  it('renders nested lists, quotes, tables and line breaks', () => {
    const html = `<ul><li>one<li>two<ul><li>two.a</li></ul></ul>
      <blockquote><p>Quoted</p><p>twice</p></blockquote>
      <table><tr><th>Name</th><th>Size</th></tr><tr><td>a|b</td><td>1</td></tr></table>
      <p>line<br>break</p><hr><dl><dt>Term</dt><dd>Meaning</dd></dl>`;
    expect(htmlToText(html).text).toBe(
      [
        '- one\n- two\n  - two.a',
        '> Quoted\n>\n> twice',
        '| Name | Size |\n| --- | --- |\n| a\\|b | 1 |',
        'line\nbreak',
        '---',
        '**Term**\n  Meaning',
      ].join('\n\n'),
    );
  });

  it('resolves links against <base href>, drops script links, anchors and hidden elements', () => {
    const html = `<head><base href="https://docs.example.com/v2/"></head>
      <p><a href="guide.html">Guide</a> <a href="javascript:alert(1)">Run</a> <a href="#top">Top</a>
      <img src="/logo.png" alt="Logo"> <span hidden>secret</span><span aria-hidden="true">icon</span></p>`;
    expect(htmlToText(html).text).toBe(
      '[Guide](https://docs.example.com/v2/guide.html) Run Top ![Logo](https://docs.example.com/logo.png)',
    );
  });

  it('closes unclosed paragraphs and survives stray end tags and comments', () => {
    const html = '<p>First<p>Second</span></div><!-- note --><div>Third';
    expect(htmlToText(html).text).toBe('First\n\nSecond\n\nThird');
  });

  it('keeps code blocks verbatim and chooses a longer fence when needed', () => {
    const html = '<pre>a  b\n\n  ```inner```\n</pre><p>Use <code>x `y`</code></p>';
    expect(htmlToText(html).text).toBe('````\na  b\n\n  ```inner```\n````\n\nUse `` x `y` ``');
  });

  it('finishes on hostile input: unclosed tags, quotes, bogus comments and deep nesting', () => {
    // Each of these made the first version rescan the rest of the document per tag (quadratic).
    for (const html of ['<a "'.repeat(100_000), '<!x'.repeat(100_000), "<a b='".repeat(100_000)])
      expect(typeof htmlToText(html).text).toBe('string');
    const deep = `${'<div><ul><li>'.repeat(20_000)}bottom`;
    expect(htmlToText(deep).text).toContain('bottom');
    expect(htmlToText('<script>a</scriptx>b</script><p>after</p>').text).toBe('after');
  });

  it('decodes named, decimal and hex entities and leaves unknown ones', () => {
    expect(decodeHtmlEntities('&lt;&amp;&gt; &#233;&#xE9; &nbsp;&copy; &bogus; &#0;')).toBe(
      '<&> éé \u00a0© &bogus; \ufffd',
    );
    // Names every object inherits are no entities.
    expect(decodeHtmlEntities('&constructor; &toString &valueOf;')).toBe(
      '&constructor; &toString &valueOf;',
    );
  });

  it('never throws on arbitrary markup, and drops script contents from plain surroundings', () => {
    const markup = fc.array(
      fc.oneof(
        fc.string(),
        fc.constantFrom(
          '<p>',
          '</p>',
          '<li>',
          '<ul>',
          '</ul>',
          '<pre>',
          '<a href="x">',
          '</a>',
          '<!--',
          '&amp',
          '<table><tr><td>',
          '<br/>',
          '<',
        ),
      ),
    );
    fc.assert(
      fc.property(markup, (parts) => typeof htmlToText(parts.join('')).text === 'string'),
      { numRuns: 300 },
    );
    const plain = fc.string().filter((text) => !/[<&]/.test(text) && !text.includes('SECRET'));
    fc.assert(
      fc.property(plain, plain, (before, after) => {
        const { text } = htmlToText(`${before}<script>SECRET()</script>${after}`);
        return !text.includes('SECRET');
      }),
      { numRuns: 300 },
    );
  });
});
