// The converter's HTML parser: a forgiving element tree, as browsers build one for the common
// cases (unclosed tags closed by their parent's end tag, `<p>` and `<li>` closing themselves).
import { decodeHtmlEntities } from './html-entities.js';

/** An element of the tree. */
export interface ElementNode {
  type: 'element';
  name: string;
  attributes: Record<string, string>;
  children: HtmlNode[];
  parent: ElementNode | undefined;
  /** Nesting depth; elements deeper than {@link maxDepth} are flattened into their parent. */
  depth: number;
}

export interface TextNode {
  type: 'text';
  text: string;
}

export type HtmlNode = ElementNode | TextNode;

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
export function parseHtml(html: string): ElementNode {
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
  // processing instructions run to the next `>` or the end, so no match attempt rescans the text;
  // the name ends where its characters do (else every split of `<a000…'` between name and
  // attributes was tried: quadratic, minutes for 100 kB).
  const tag =
    /<!--[\s\S]*?(?:-->|$)|<![^>]*(?:>|$)|<\?[^>]*(?:>|$)|<(\/?)([a-zA-Z][a-zA-Z0-9:-]*)(?![a-zA-Z0-9:-])((?:[^<>"']|"[^"<]*"|'[^'<]*')*)>/g;
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
