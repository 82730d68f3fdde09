/**
 * A small HTML → Markdown / plain-text converter for web_fetch. Not a browser: it builds a
 * forgiving element tree (unclosed tags are closed by their parent's end tag, `<p>` and `<li>`
 * close themselves as browsers do), drops noise (scripts, styles, navigation, forms) and renders
 * headings, links, lists, code blocks, quotes and tables.
 */

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

interface ElementNode {
  type: 'element';
  name: string;
  attributes: Record<string, string>;
  children: HtmlNode[];
  parent: ElementNode | undefined;
  /** Nesting depth; elements deeper than {@link maxDepth} are flattened into their parent. */
  depth: number;
}

interface TextNode {
  type: 'text';
  text: string;
}

type HtmlNode = ElementNode | TextNode;

const voidElements = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);

/** Elements whose content is raw text: everything up to the matching end tag. */
const rawTextElements = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'noscript']);

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

/** Start tags that close an open `<p>` (the HTML parsing rule, simplified). */
const closesParagraph = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'div',
  'dl',
  'fieldset',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'table',
  'ul',
]);

const namedEntities: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  copy: '©',
  reg: '®',
  trade: '™',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  sbquo: '‚',
  ldquo: '“',
  rdquo: '”',
  bdquo: '„',
  laquo: '«',
  raquo: '»',
  lsaquo: '‹',
  rsaquo: '›',
  bull: '•',
  middot: '·',
  deg: '°',
  euro: '€',
  pound: '£',
  yen: '¥',
  cent: '¢',
  sect: '§',
  para: '¶',
  times: '×',
  divide: '÷',
  plusmn: '±',
  minus: '−',
  frac12: '½',
  frac14: '¼',
  frac34: '¾',
  sup2: '²',
  sup3: '³',
  micro: 'µ',
  larr: '←',
  rarr: '→',
  uarr: '↑',
  darr: '↓',
  harr: '↔',
  rArr: '⇒',
  lArr: '⇐',
  le: '≤',
  ge: '≥',
  ne: '≠',
  asymp: '≈',
  infin: '∞',
  check: '✓',
  dagger: '†',
  Dagger: '‡',
  permil: '‰',
  prime: '′',
  Prime: '″',
  shy: '\u00ad',
  zwj: '\u200d',
  zwnj: '\u200c',
  thinsp: '\u2009',
  ensp: '\u2002',
  emsp: '\u2003',
  iexcl: '¡',
  iquest: '¿',
  ordf: 'ª',
  ordm: 'º',
  aacute: 'á',
  eacute: 'é',
  iacute: 'í',
  oacute: 'ó',
  uacute: 'ú',
  agrave: 'à',
  egrave: 'è',
  igrave: 'ì',
  ograve: 'ò',
  ugrave: 'ù',
  acirc: 'â',
  ecirc: 'ê',
  icirc: 'î',
  ocirc: 'ô',
  ucirc: 'û',
  auml: 'ä',
  euml: 'ë',
  iuml: 'ï',
  ouml: 'ö',
  uuml: 'ü',
  yuml: 'ÿ',
  Auml: 'Ä',
  Ouml: 'Ö',
  Uuml: 'Ü',
  Aacute: 'Á',
  Eacute: 'É',
  szlig: 'ß',
  ccedil: 'ç',
  Ccedil: 'Ç',
  ntilde: 'ñ',
  Ntilde: 'Ñ',
  aring: 'å',
  Aring: 'Å',
  aelig: 'æ',
  AElig: 'Æ',
  oslash: 'ø',
  Oslash: 'Ø',
  atilde: 'ã',
  otilde: 'õ',
};

/** Decodes character references: named (common ones), decimal `&#233;` and hex `&#xE9;`. */
export function decodeHtmlEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(
    /&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z][a-zA-Z0-9]{1,31});?/g,
    (whole, body: string) => {
      if (body.startsWith('#')) {
        const hex = body[1] === 'x' || body[1] === 'X';
        const code = Number.parseInt(body.slice(hex ? 2 : 1), hex ? 16 : 10);
        // NUL, surrogates and values past U+10FFFF are replaced, as browsers do.
        if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd';
        return String.fromCodePoint(code);
      }
      return namedEntities[body] ?? whole;
    },
  );
}

function parseAttributes(source: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  const pattern = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
  for (const match of source.matchAll(pattern)) {
    const name = (match[1] ?? '').toLowerCase();
    if (name === '' || name in attributes) continue;
    attributes[name] = decodeHtmlEntities(match[2] ?? match[3] ?? match[4] ?? '');
  }
  return attributes;
}

const maxDepth = 256;

/** Parses HTML into a forgiving element tree rooted at a synthetic `#root`. */
function parseHtml(html: string): ElementNode {
  const root: ElementNode = {
    type: 'element',
    name: '#root',
    attributes: {},
    children: [],
    parent: undefined,
    depth: 0,
  };
  let current = root;
  const isOpen = (name: string) => {
    for (let node: ElementNode | undefined = current; node !== undefined; node = node.parent)
      if (node.name === name) return true;
    return false;
  };
  const closeTo = (name: string) => {
    for (let node: ElementNode | undefined = current; node !== undefined; node = node.parent) {
      if (node.name === name) {
        current = node.parent ?? root;
        return;
      }
    }
  };
  // Linear on hostile input: a tag's attributes never cross a `<`, and bogus comments and
  // processing instructions run to the next `>` or the end, so no match attempt rescans the text.
  const tag =
    /<!--[\s\S]*?(?:-->|$)|<![^>]*(?:>|$)|<\?[^>]*(?:>|$)|<(\/?)([a-zA-Z][a-zA-Z0-9:-]*)((?:[^<>"']|"[^"<]*"|'[^'<]*')*)>/g;
  let last = 0;
  for (;;) {
    const match = tag.exec(html);
    const textEnd = match === null ? html.length : match.index;
    if (textEnd > last)
      current.children.push({ type: 'text', text: decodeHtmlEntities(html.slice(last, textEnd)) });
    if (match === null) break;
    last = tag.lastIndex;
    const name = match[2]?.toLowerCase();
    if (name === undefined) continue; // comment, doctype, processing instruction
    if (match[1] === '/') {
      if (isOpen(name)) closeTo(name);
      continue;
    }
    if (closesParagraph.has(name) && isOpen('p')) closeTo('p');
    if (name === 'li' && current.name === 'li') closeTo('li');
    if ((name === 'dt' || name === 'dd') && (current.name === 'dt' || current.name === 'dd'))
      closeTo(current.name);
    if (
      (name === 'tr' || name === 'td' || name === 'th') &&
      (current.name === 'td' || current.name === 'th')
    )
      closeTo(current.name);
    if (name === 'tr' && current.name === 'tr') closeTo('tr');
    const attributeSource = match[3] ?? '';
    const element: ElementNode = {
      type: 'element',
      name,
      attributes: parseAttributes(attributeSource),
      children: [],
      parent: current,
      depth: current.depth + 1,
    };
    current.children.push(element);
    const selfClosing = attributeSource.trimEnd().endsWith('/');
    if (rawTextElements.has(name)) {
      const endTag = new RegExp(`</${name}(?=[\\s/>]|$)`, 'gi');
      endTag.lastIndex = last;
      const end = endTag.exec(html)?.index ?? -1;
      const raw = html.slice(last, end === -1 ? html.length : end);
      element.children.push({
        type: 'text',
        text: name === 'title' || name === 'textarea' ? decodeHtmlEntities(raw) : raw,
      });
      if (end === -1) break;
      const close = html.indexOf('>', end);
      last = close === -1 ? html.length : close + 1;
      tag.lastIndex = last;
      continue;
    }
    if (!voidElements.has(name) && !selfClosing && element.depth <= maxDepth) current = element;
  }
  return root;
}

interface RenderContext {
  markdown: boolean;
  baseUrl: string | undefined;
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

function renderList(node: ElementNode, context: RenderContext): string {
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
    items.push(indent(body.replace(/\n{2,}/g, '\n'), ' '.repeat(marker.length), marker));
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
              .replace(/\s*\n\s*/g, ' ')
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
  const width = Math.max(...rows.map((row) => row.length));
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
  if (node.attributes.hidden !== undefined || node.attributes['aria-hidden'] === 'true') return '';
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
      const text = renderBlockContent(node, context).replace(/\s*\n\s*/g, ' ');
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
      const trailing = text.match(/\s*$/)?.[0] ?? '';
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
      const raw = textOf(node).replace(/^\n/, '').replace(/\s+$/, '');
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
      const text = renderBlockContent(node, context);
      return `${blockBreak}${markdown ? indent(text, '> ').replace(/^$/gm, '>') : text}${blockBreak}`;
    }
    case 'dt': {
      const text = renderBlockContent(node, context);
      return `${blockBreak}${markdown && text !== '' ? `**${text}**` : text}\n`;
    }
    case 'dd':
      return `${indent(renderBlockContent(node, context), '  ')}${blockBreak}`;
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
        .map((line) => line.replace(/[ \t]+$/, ''))
        .join('\n')
        .replace(/^[ \t]+/, '')
        .replace(/^\n+|\n+$/g, ''),
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
  const root = parseHtml(html);
  let title: string | undefined;
  let baseHref: string | undefined;
  const visit = (node: ElementNode): void => {
    for (const child of node.children) {
      if (child.type !== 'element') continue;
      if (child.name === 'title' && title === undefined)
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
    baseUrl,
  };
  const text = finish(renderNode(root, context)).replace(/\u00a0/g, ' ');
  return title === undefined ? { text } : { text, title };
}
