/**
 * Markdown in answers, rendered for a terminal with `marked` and `marked-terminal` (the usual
 * pair: headings, emphasis, lists, tables, links and highlighted code as ANSI text). Imported
 * lazily, only when answers go to a terminal with colours, so a start does not pay for it.
 */
import { Marked, type MarkedExtension } from 'marked';
import { markedTerminal } from 'marked-terminal';

/**
 * Answers longer than this are shown as written: marked's emphasis parsing takes quadratic time
 * on some texts (`_a` repeated: 4 s for 160 kB, 15 s for 320 kB), before Ctrl-C is read.
 */
export const maxRenderedChars = 32_000;

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
