/**
 * Markdown in answers, rendered for a terminal with `marked` and `marked-terminal` (the usual
 * pair: headings, emphasis, lists, tables, links and highlighted code as ANSI text). Imported
 * lazily, only when answers go to a terminal with colours, so a start does not pay for it.
 */
import { terminalSafe } from '@agent/core';
import { Marked, type MarkedExtension, type RendererThis, type Tokens } from 'marked';
import { markedTerminal } from 'marked-terminal';

/**
 * Answers longer than this are shown as written: marked's emphasis parsing takes quadratic time
 * on some texts (`_a` repeated: 4 s for 160 kB, 15 s for 320 kB), before Ctrl-C is read.
 */
export const maxRenderedChars = 32_000;

/**
 * A link as its text and, when they differ, its target in brackets — never a terminal hyperlink.
 * marked-terminal writes an OSC 8 hyperlink where the terminal supports them (iTerm2, VS Code,
 * Windows Terminal, VTE): its visible text is whatever the answer says, so
 * `[https://github.com/org/repo](https://evil.example)` showed the first address and opened the
 * second — and what the model writes is steered by what it read.
 */
function plainLink(this: RendererThis, token: Tokens.Link): string {
  const text = this.parser.parseInline(token.tokens);
  const target = terminalSafe(token.href, { singleLine: true });
  return text === '' || text === token.href ? target : `${text} (${target})`;
}

/**
 * A function that renders Markdown for a terminal `width` columns wide; an answer longer than
 * {@link maxRenderedChars}, or one marked cannot render (nesting deep enough to overflow its
 * stack), is returned as written.
 */
export function createMarkdownRenderer(width: number): (text: string) => string {
  const marked = new Marked(
    markedTerminal({
      width: Math.max(20, width),
      reflowText: true,
      showSectionPrefix: false,
      tab: 2,
    }) as unknown as MarkedExtension,
    { renderer: { link: plainLink } },
  );
  return (text) => {
    if (text.length > maxRenderedChars) return text;
    let rendered: string;
    try {
      rendered = marked.parse(text, { async: false });
    } catch {
      return text;
    }
    // The lookbehind tries a run of blanks once, not from each of its characters (quadratic on
    // an answer with a long run of blanks inside).
    return rendered.replace(/(?<!\s)\s+$/, '');
  };
}
