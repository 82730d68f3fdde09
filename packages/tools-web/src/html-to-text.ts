/**
 * A small HTML → Markdown / plain-text converter for web_fetch. Not a browser: it builds a
 * forgiving element tree (unclosed tags are closed by their parent's end tag, `<p>` and `<li>`
 * close themselves as browsers do), drops noise (scripts, styles, navigation, forms) and renders
 * headings, links, lists, code blocks, quotes and tables. Kept beside Readability + turndown
 * (html-to-markdown.ts) as the fallback for pages with no article, and for pages too large for a
 * DOM: the README's "Why these libraries" says what was measured.
 */
import { hiddenByStyle } from './hidden-content.js';
import { type ElementNode, type HtmlNode, parseHtml } from './html-parse.js';
import { sheetHidingMatcher } from './stylesheet-hiding.js';

/** Options of {@link htmlToText}. */
export interface HtmlToTextOptions {
  /** `markdown` keeps structure as Markdown; `text` gives plain text [markdown]. */
  format?: 'markdown' | 'text';
  /** URL that relative links and images are resolved against. */
  baseUrl?: string;
}

/** What {@link htmlToText} returns. */
export interface HtmlToTextResult {
  /** The converted document. */
  text: string;
  /** The `<title>`, when there is one. */
  title?: string;
}

/** Elements dropped with their content: code, styling and page chrome, not the document. */
const droppedElements = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'math',
  'canvas',
  'iframe',
  'object',
  'nav',
  'footer',
  'aside',
  'form',
  'button',
  'select',
  'dialog',
  'head',
]);

const blockElements = new Set([
  'address',
  'article',
  'body',
  'blockquote',
  'center',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'li',
  'main',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tr',
  'ul',
]);

interface RenderContext {
  markdown: boolean;
  baseUrl: string | undefined;
  /** Quotes, lists and definitions this node is inside (each indents what it holds). */
  indents: number;
  /** Whether the page's stylesheets hide an element, by its attributes (stylesheet-hiding.ts). */
  hiddenBySheet: ((attributes: Readonly<Record<string, string>>) => boolean) | undefined;
}

/**
 * Quotes, lists and definitions nested deeper than this add no further indentation: each level
 * re-indents every line inside it, so a page of 256 nested quotes around 15,000 lines (or 15,000
 * empty quotes) took 40 s of the calling thread to convert.
 */
const maxIndents = 8;

/** The context of what an indenting element holds, and whether that element still indents. */
function indented(context: RenderContext): { inner: RenderContext; indents: boolean } {
  return {
    inner: { ...context, indents: context.indents + 1 },
    indents: context.indents < maxIndents,
  };
}

/** Paragraph break marker, turned into blank lines at the end. */
const blockBreak = '\u0000';

function resolveUrl(href: string, baseUrl: string | undefined): string | undefined {
  const trimmed = href.trim();
  if (trimmed === '' || trimmed.startsWith('#')) return undefined;
  try {
    const url = baseUrl === undefined ? new URL(trimmed) : new URL(trimmed, baseUrl);
    if (url.protocol === 'javascript:' || url.protocol === 'data:') return undefined;
    return url.href;
  } catch {
    return undefined;
  }
}

function textOf(node: HtmlNode): string {
  if (node.type === 'text') return node.text;
  return node.children.map(textOf).join('');
}

function renderChildren(node: ElementNode, context: RenderContext): string {
  return node.children.map((child) => renderNode(child, context)).join('');
}

/** Renders children as a block: trimmed, with its inner paragraph breaks made real. */
function renderBlockContent(node: ElementNode, context: RenderContext): string {
  return finish(renderChildren(node, context));
}

function indent(text: string, prefix: string, firstPrefix = prefix): string {
  return text
    .split('\n')
    .map((line, index) => (index === 0 ? firstPrefix : line === '' ? '' : prefix) + line)
    .join('\n');
}

function renderList(node: ElementNode, outer: RenderContext): string {
  const { inner: context, indents } = indented(outer);
  const ordered = node.name === 'ol';
  let number = Number.parseInt(node.attributes.start ?? '1', 10);
  if (!Number.isFinite(number)) number = 1;
  const items: string[] = [];
  for (const child of node.children) {
    if (child.type === 'text') {
      if (child.text.trim() !== '') items.push(`- ${collapse(child.text).trim()}`);
      continue;
    }
    const body =
      child.name === 'li' ? renderBlockContent(child, context) : finish(renderNode(child, context));
    if (body === '') continue;
    const marker = ordered ? `${number}. ` : '- ';
    number++;
    items.push(
      indent(body.replace(/\n{2,}/g, '\n'), indents ? ' '.repeat(marker.length) : '', marker),
    );
  }
  return `${blockBreak}${items.join('\n')}${blockBreak}`;
}

function renderTable(node: ElementNode, context: RenderContext): string {
  const rows: string[][] = [];
  const collect = (element: ElementNode) => {
    for (const child of element.children) {
      if (child.type !== 'element') continue;
      if (child.name === 'tr') {
        const cells = child.children
          .filter(
            (cell): cell is ElementNode =>
              cell.type === 'element' && (cell.name === 'td' || cell.name === 'th'),
          )
          .map((cell) =>
            renderBlockContent(cell, context)
              .replace(/(?<!\s)\s*\n\s*/g, ' ')
              .replace(/\|/g, '\\|'),
          );
        rows.push(cells);
      } else if (child.name !== 'table') {
        collect(child);
      }
    }
  };
  collect(node);
  if (rows.length === 0) return '';
  if (!context.markdown)
    return `${blockBreak}${rows.map((row) => row.join('\t')).join('\n')}${blockBreak}`;
  // A loop, not `Math.max(...rows)`: a page of 300,000 rows overflowed the stack with the spread.
  let width = 0;
  for (const row of rows) width = Math.max(width, row.length);
  const line = (row: string[]) =>
    `| ${Array.from({ length: width }, (_, index) => row[index] ?? '').join(' | ')} |`;
  const [head = [], ...body] = rows;
  return `${blockBreak}${[line(head), `|${' --- |'.repeat(width)}`, ...body.map(line)].join('\n')}${blockBreak}`;
}

function longestBacktickRun(text: string): number {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return longest;
}

function collapse(text: string): string {
  return text.replace(/[ \t\n\r\f]+/g, ' ');
}

function renderNode(node: HtmlNode, context: RenderContext): string {
  if (node.type === 'text') return collapse(node.text);
  const name = node.name;
  if (droppedElements.has(name) || name === 'title') return '';
  if (
    node.attributes.hidden !== undefined ||
    node.attributes['aria-hidden'] === 'true' ||
    hiddenByStyle(node.attributes.style) ||
    context.hiddenBySheet?.(node.attributes) === true
  )
    return '';
  const markdown = context.markdown;
  switch (name) {
    case 'br':
      return '\n';
    case 'hr':
      return `${blockBreak}${markdown ? '---' : ''}${blockBreak}`;
    case 'h1':
    case 'h2':
    case 'h3':
    case 'h4':
    case 'h5':
    case 'h6': {
      const text = renderBlockContent(node, context).replace(/(?<!\s)\s*\n\s*/g, ' ');
      if (text === '') return '';
      return `${blockBreak}${markdown ? `${'#'.repeat(Number(name[1]))} ` : ''}${text}${blockBreak}`;
    }
    case 'a': {
      const text = renderChildren(node, context);
      const href =
        node.attributes.href === undefined
          ? undefined
          : resolveUrl(node.attributes.href, context.baseUrl);
      if (!markdown || href === undefined || text.trim() === '') return text;
      const leading = text.match(/^\s*/)?.[0] ?? '';
      const trailing = text.match(/(?<!\s)\s*$/)?.[0] ?? '';
      return `${leading}[${text.trim().replace(/([[\]])/g, '\\$1')}](${href.replace(/[()\s]/g, encodeURIComponent)})${trailing}`;
    }
    case 'img': {
      const alt = collapse(node.attributes.alt ?? '').trim();
      if (!markdown) return alt;
      const src =
        node.attributes.src === undefined
          ? undefined
          : resolveUrl(node.attributes.src, context.baseUrl);
      return src === undefined || alt === '' ? alt : `![${alt}](${src})`;
    }
    case 'strong':
    case 'b': {
      const text = renderChildren(node, context);
      return markdown && text.trim() !== '' ? `**${text.trim()}**` : text;
    }
    case 'em':
    case 'i': {
      const text = renderChildren(node, context);
      return markdown && text.trim() !== '' ? `_${text.trim()}_` : text;
    }
    case 'code':
    case 'kbd':
    case 'samp': {
      const text = collapse(textOf(node));
      if (!markdown || text.trim() === '') return text;
      // CommonMark: the fence is longer than any backtick run inside; pad when the code touches one.
      const fence = '`'.repeat(longestBacktickRun(text) + 1);
      const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
      return `${fence}${pad}${text}${pad}${fence}`;
    }
    case 'pre': {
      const raw = textOf(node)
        .replace(/^\n/, '')
        .replace(/(?<!\s)\s+$/, '');
      if (raw === '') return '';
      if (!markdown) return `${blockBreak}${raw}${blockBreak}`;
      const code = node.children.find(
        (child): child is ElementNode => child.type === 'element' && child.name === 'code',
      );
      const classes = `${code?.attributes.class ?? ''} ${node.attributes.class ?? ''}`;
      const language = classes.match(/(?:^|\s)(?:language|lang)-([\w+#.-]+)/)?.[1] ?? '';
      const fence = '`'.repeat(Math.max(3, longestBacktickRun(raw) + 1));
      return `${blockBreak}${fence}${language}\n${raw}\n${fence}${blockBreak}`;
    }
    case 'ul':
    case 'ol':
      return renderList(node, context);
    case 'table':
      return renderTable(node, context);
    case 'blockquote': {
      const { inner, indents } = indented(context);
      const text = renderBlockContent(node, inner);
      if (text === '') return '';
      return `${blockBreak}${markdown && indents ? indent(text, '> ').replace(/^$/gm, '>') : text}${blockBreak}`;
    }
    case 'dt': {
      const text = renderBlockContent(node, context);
      return `${blockBreak}${markdown && text !== '' ? `**${text}**` : text}\n`;
    }
    case 'dd': {
      const { inner, indents } = indented(context);
      const text = renderBlockContent(node, inner);
      return `${indents ? indent(text, '  ') : text}${blockBreak}`;
    }
    case 'td':
    case 'th':
      return `${renderChildren(node, context)} `;
    default:
      if (blockElements.has(name))
        return `${blockBreak}${renderChildren(node, context)}${blockBreak}`;
      return renderChildren(node, context);
  }
}

/** Turns block markers into blank lines, trims spaces at line ends and collapses empty lines. */
function finish(rendered: string): string {
  return rendered
    .split(blockBreak)
    .map((block) =>
      block
        .split('\n')
        .map((line) => line.replace(/(?<![ \t])[ \t]+$/, ''))
        .join('\n')
        .replace(/^[ \t]+/, '')
        .replace(/^\n+|(?<!\n)\n+$/g, ''),
    )
    .filter((block) => block.trim() !== '')
    .join('\n\n');
}

/**
 * Converts an HTML document to readable Markdown (headings `#`, links `[text](url)` resolved
 * against `baseUrl` or `<base href>`, lists, fenced code blocks with their language, quotes,
 * tables) or plain text. Scripts, styles, `nav`, `footer`, `aside`, forms and hidden elements
 * are dropped; entities are decoded.
 */
export function htmlToText(html: string, options: HtmlToTextOptions = {}): HtmlToTextResult {
  return convertWholePage(html, options, { applySheets: true });
}

/**
 * {@link htmlToText}; `applySheets: false` when the page's stylesheets were applied already (a
 * DOM was built and its hidden elements removed: the cascade judged better than this can).
 */
export function convertWholePage(
  html: string,
  options: HtmlToTextOptions,
  { applySheets }: { applySheets: boolean },
): HtmlToTextResult {
  const root = parseHtml(html);
  let title: string | undefined;
  let baseHref: string | undefined;
  const styles: string[] = [];
  const visit = (node: ElementNode): void => {
    for (const child of node.children) {
      if (child.type !== 'element') continue;
      if (child.name === 'style') styles.push(textOf(child));
      else if (child.name === 'title' && title === undefined)
        title = collapse(textOf(child)).trim() || undefined;
      else if (
        child.name === 'base' &&
        baseHref === undefined &&
        child.attributes.href !== undefined
      )
        baseHref = child.attributes.href;
      else visit(child);
    }
  };
  visit(root);
  const baseUrl =
    baseHref === undefined
      ? options.baseUrl
      : (resolveUrl(baseHref, options.baseUrl) ?? options.baseUrl);
  const context: RenderContext = {
    markdown: (options.format ?? 'markdown') === 'markdown',
    indents: 0,
    baseUrl,
    hiddenBySheet: applySheets ? sheetHidingMatcher(styles) : undefined,
  };
  const text = finish(renderNode(root, context)).replace(/\u00a0/g, ' ');
  return title === undefined ? { text } : { text, title };
}
