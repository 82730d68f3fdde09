import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { removeHiddenElements } from './hidden-content.js';
import { convertWholePage, type HtmlToTextOptions, type HtmlToTextResult } from './html-to-text.js';

/** What {@link htmlToMarkdown} returns: the text, the title, and which path produced it. */
export interface HtmlToMarkdownResult extends HtmlToTextResult {
  /** `article`: Readability found the main content; `page`: the whole page was converted. */
  extracted: 'article' | 'page';
}

/** The DOM surface the rules read (no DOM lib in this package's types). */
interface Attributes {
  getAttribute(name: string): string | null;
}

/** Pages this large are converted whole, without building a DOM for Readability (memory, time). */
const maxReadabilityChars = 5_000_000;

/**
 * Pages nested deeper than this are converted whole: Readability walks ancestors and subtrees
 * recursively, and 60,000 nested `<b>` (180 kB, under the worker's threshold) held the calling
 * thread for 15 s before it overflowed the stack, and 250 nested quotes around 15,000 lines 6 s.
 * Real pages nest a few dozen levels (the Ars Technica page of the tests: 15).
 */
export const maxReadabilityDepth = 128;

/** The children a depth walk reads (linkedom's elements). */
interface TreeElement {
  firstElementChild: TreeElement | null;
  nextElementSibling: TreeElement | null;
}

/**
 * Whether the tree under `root` is nested deeper than `maxDepth`, or its elements' depths add up
 * to more than `maxWork` (iterative: no stack to overflow).
 */
function beyondReadability(root: TreeElement | null, maxDepth: number, maxWork: number): boolean {
  const stack: [TreeElement, number][] = root === null ? [] : [[root, 1]];
  let work = 0;
  while (stack.length > 0) {
    const [element, depth] = stack.pop() as [TreeElement, number];
    work += depth;
    if (depth > maxDepth || work > maxWork) return true;
    for (let child = element.firstElementChild; child !== null; child = child.nextElementSibling)
      stack.push([child, depth + 1]);
  }
  return false;
}

/** Options of {@link htmlToMarkdown}. */
export interface HtmlToMarkdownOptions extends HtmlToTextOptions {
  /**
   * Largest sum of every element's depth for which Readability runs; beyond it the page is
   * converted whole (linear). Readability's time grows with that sum — 16 kB of elements nested
   * 120 deep held a thread for seconds — so the conversion done in the agent's own thread
   * passes a bound ({@link convertHtml}) [none].
   */
  maxTreeWork?: number;
  /** Selector tests the page's stylesheets may cost (stylesheet-hiding.ts) [1,000,000]. */
  maxStyleWork?: number;
}

function turndown(baseUrl: string | undefined): TurndownService {
  const service = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '*',
  });
  service.remove(['script', 'style', 'noscript', 'iframe', 'form', 'button', 'svg' as 'script']);
  const absolute = (href: string | null): string | null => {
    if (href === null || href === '' || baseUrl === undefined) return href;
    try {
      return new URL(href, baseUrl).href;
    } catch {
      return href;
    }
  };
  service.addRule('absolute-links', {
    filter: (node) =>
      node.nodeName === 'A' && (node as unknown as Attributes).getAttribute('href') !== null,
    replacement: (content, node) => {
      const href = absolute((node as unknown as Attributes).getAttribute('href'));
      const text = content.trim();
      if (text === '') return '';
      if (href === null || href.startsWith('javascript:') || href.startsWith('#')) return text;
      return `[${text}](${href})`;
    },
  });
  service.addRule('absolute-images', {
    filter: 'img',
    replacement: (_content, node) => {
      const element = node as unknown as Attributes;
      const src = absolute(element.getAttribute('src'));
      if (src === null || src.startsWith('data:')) return '';
      const alt = (element.getAttribute('alt') ?? '').replace(/[[\]]/g, '');
      return `![${alt}](${src})`;
    },
  });
  return service;
}

/**
 * HTML → Markdown (or plain text) for web_fetch: Mozilla's Readability, over a linkedom DOM,
 * picks the page's main content (the article without navigation, ads, footers), and turndown
 * writes it as Markdown. A page with no article to find (an index, a form, a tiny page) — or one
 * too large to build a DOM for — goes through the small built-in converter, whole.
 *
 * Chosen by measuring (bench `html-to-markdown`, five real pages from Readability's test corpus):
 * every converter kept all of each article's words, but words from outside the article were
 * 5–8% of this one's output against 21–51% for the built-in converter and 9–81% for
 * node-html-markdown alone — about a quarter of the tokens on a news page — at 20–140 ms a page.
 */
export function htmlToMarkdown(
  html: string,
  options: HtmlToMarkdownOptions = {},
): HtmlToMarkdownResult {
  const { maxTreeWork = Number.POSITIVE_INFINITY, maxStyleWork, ...textOptions } = options;
  // The page as the whole-page converter reads it: without what its stylesheets hide, once known.
  let visibleHtml = html;
  // Whether the cascade judged the page's stylesheets here (the whole-page converter's own
  // reading of them, by class and id only, is then not needed).
  let sheetsApplied = false;
  if (html.length <= maxReadabilityChars) {
    try {
      const { document } = parseHTML(html);
      const title = document.querySelector('title')?.textContent?.trim() || undefined;
      // What the reader never sees is not the article either (nor instructions the page hid).
      // The whole-page converter sees inline hiding itself, not a stylesheet's: it gets the page
      // as cleaned here (before Readability changes the document).
      if (removeHiddenElements(document as never, maxStyleWork) > 0)
        visibleHtml = document.toString();
      sheetsApplied = true;
      const root = document.documentElement as unknown as TreeElement | null;
      const article = beyondReadability(root, maxReadabilityDepth, maxTreeWork)
        ? null
        : new Readability(document as never, { charThreshold: 200 }).parse();
      if (article?.content != null && (article.textContent ?? '').trim().length >= 200) {
        const heading = article.title?.trim() || title;
        if (options.format === 'text') {
          const text = (article.textContent ?? '')
            .replace(/(?<![ \t])[ \t]+\n/g, '\n')
            .replace(/\n{3,}/g, '\n\n')
            .trim();
          return {
            text: heading === undefined ? text : `${heading}\n\n${text}`,
            ...(title === undefined ? {} : { title }),
            extracted: 'article',
          };
        }
        const body = turndown(options.baseUrl).turndown(article.content).trim();
        const startsWithHeading = heading !== undefined && body.startsWith(`# ${heading}`);
        return {
          text: heading === undefined || startsWithHeading ? body : `# ${heading}\n\n${body}`,
          ...(title === undefined ? {} : { title }),
          extracted: 'article',
        };
      }
    } catch {
      // A DOM or Readability failure falls back to the whole-page converter below.
    }
  }
  return {
    ...convertWholePage(visibleHtml, textOptions, { applySheets: !sheetsApplied }),
    extracted: 'page',
  };
}
