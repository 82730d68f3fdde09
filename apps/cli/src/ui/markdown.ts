/**
 * Markdown in answers, rendered for a terminal with `marked` and `marked-terminal` (the usual
 * pair: headings, emphasis, lists, tables, links and highlighted code as ANSI text). Imported
 * lazily, only when answers go to a terminal with colours, so a start does not pay for it.
 */
import { Marked, type MarkedExtension } from 'marked';
import { markedTerminal } from 'marked-terminal';

/** A function that renders Markdown for a terminal `width` columns wide. */
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
    const rendered = marked.parse(text, { async: false });
    // The lookbehind tries a run of blanks once, not from each of its characters (quadratic on
    // an answer with a long run of blanks inside).
    return rendered.replace(/(?<!\s)\s+$/, '');
  };
}
