// Text a page's own `<style>` sheets hide is left out of web_fetch's answer, on the article path
// and the whole-page path, while the cascade keeps what a later, more specific, important or
// inline declaration shows again. Before, every HIDDEN marker below reached the model (only
// inline styles, `hidden`, `aria-hidden` and templates were seen).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { executeTool, toolResultText } from '@agent/core';
import { parseHTML } from 'linkedom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertHtml } from './html-conversion.js';
import { htmlToMarkdown } from './html-to-markdown.js';
import { htmlToText } from './html-to-text.js';
import { removeStylesheetHidden, sheetHidingMatcher, specificity } from './stylesheet-hiding.js';
import { createWebFetchTool } from './web-fetch.js';

const sheet = `
.x { display: none }
#by-id { visibility: hidden }
p.small { font-size: 0 }
.faded { opacity: 0 }
.offscreen { position: absolute; left: -9999px }
.indented { text-indent: -10000px }
.sr-clip { position: absolute; clip: rect(0 0 0 0) }
.sr-path { clip-path: inset(50%) }
@media screen { .media-screen { display: none } }
@media print { .media-print { display: none } }
@supports (display: grid) { .supports { display: none } }
@layer base { .layered { display: none } }
[data-secret="1"] { display: none }
div.wrap span { display: none }
.important { display: none !important }
.UPPER { DISPLAY: NONE }
.scaled { transform: scale(0) }
/* a comment */ .commented /* inside */ { display /* here */ : none }
.list-a, .list-b { display: none }
.hide.hide { display: none }
.hide { display: block }
.tab { display: none }
.tab.active { display: block }
.later { display: none }
.later { display: block }
.inline-wins { display: none }
.vis { visibility: hidden }
#vis-id { visibility: visible }
.flex { display: flex }
.hover:hover { display: none }
.readable { font-size: 0.9em; opacity: 0.8 }
`;

const hidden = [
  '<p class="x">HIDDEN-1</p>',
  '<p id="by-id">HIDDEN-2</p>',
  '<p class="small">HIDDEN-3</p>',
  '<p class="faded">HIDDEN-4</p>',
  '<p class="offscreen">HIDDEN-5</p>',
  '<p class="indented">HIDDEN-6</p>',
  '<p class="sr-clip">HIDDEN-7</p>',
  '<p class="sr-path">HIDDEN-8</p>',
  '<p class="media-screen">HIDDEN-9</p>',
  '<p class="supports">HIDDEN-10</p>',
  '<p class="layered">HIDDEN-11</p>',
  '<p data-secret="1">HIDDEN-12</p>',
  '<div class="wrap"><p>shown <span>HIDDEN-13</span></p></div>',
  '<p class="important" style="display:block">HIDDEN-14</p>',
  '<p class="UPPER">HIDDEN-15</p>',
  '<p class="scaled">HIDDEN-16</p>',
  '<p class="commented">HIDDEN-17</p>',
  '<p class="list-b">HIDDEN-18</p>',
  '<p class="hide">HIDDEN-19</p>',
  '<p class="second-sheet">HIDDEN-20</p>',
  '<noscript><p>HIDDEN-21</p></noscript>',
  '<template><p>HIDDEN-22</p></template>',
  '<p hidden>HIDDEN-23</p>',
  '<p aria-hidden="true">HIDDEN-24</p>',
  '<div class="x"><p>HIDDEN-25 <b>nested</b></p></div>',
];
const visible = [
  '<p class="media-print">VISIBLE-1</p>',
  '<p class="tab active">VISIBLE-2</p>',
  '<p class="later">VISIBLE-3</p>',
  '<p class="inline-wins" style="display: block">VISIBLE-4</p>',
  '<p class="vis" id="vis-id">VISIBLE-5</p>',
  '<p class="flex">VISIBLE-6</p>',
  '<p class="hover">VISIBLE-7</p>',
  '<p class="readable">VISIBLE-8</p>',
  '<p class="xx">VISIBLE-9</p>',
];
const words = `<p>${'Real article words about the subject matter of this page. '.repeat(30)}</p>`;
const head = `<title>T</title><style>${sheet}</style><style>.second-sheet{display:none}</style>`;
const pages: Record<string, string> = {
  '/article': `<html><head>${head}</head><body><article><h1>Title</h1>${words}${hidden.join('\n')}${visible.join('\n')}${words}</article></body></html>`,
  // No article to find: the whole-page converter reads the page as cleaned.
  '/page': `<html><head>${head}</head><body><ul><li><a href="/a">a</a></li></ul>${hidden.join('\n')}${visible.join('\n')}</body></html>`,
};

let server: Server;
let origin = '';
beforeAll(async () => {
  server = createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end(pages[request.url ?? ''] ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const tool = createWebFetchTool({ allowPrivateNetwork: true });

describe('text a stylesheet hides is left out of web_fetch', () => {
  it.each([
    ['the article path', '/article', 'markdown'],
    ['the article path, as text', '/article', 'text'],
    ['the whole-page path', '/page', 'markdown'],
    ['the whole-page path, as text', '/page', 'text'],
  ])('%s', async (_name, path, format) => {
    const message = await executeTool(tool, { url: `${origin}${path}`, format });
    const text = toolResultText(message.content);
    expect(text.match(/HIDDEN-\d+/g) ?? []).toEqual([]);
    expect((text.match(/VISIBLE-\d+/g) ?? []).sort()).toEqual(
      visible.map((_, index) => `VISIBLE-${index + 1}`).sort(),
    );
    expect(text).toContain('shown');
  });
});

describe('removeStylesheetHidden', () => {
  it('a page of many hiding rules is handled within its bounds, failing closed', () => {
    const rules = Array.from({ length: 3000 }, (_, index) => `.c${index}{display:none}`).join('');
    const body = Array.from({ length: 3000 }, (_, index) => `<p class="c${index}">t</p>`).join('');
    const { document } = parseHTML(
      `<html><head><style>${rules}</style></head><body>${body}</body></html>`,
    );
    const removed = removeStylesheetHidden(document as never);
    // The first 512 hiding rules are applied; the page stays whole past them.
    expect(removed).toBe(512);
  });

  it('past its budget the rules left apply by the classes, ids and attributes they name, cascade or not', () => {
    const { document } = parseHTML(
      '<html><head><style>.a{display:none} #b{display:none} div .c.d{display:none} [data-x]{display:none} .a{display:block}</style></head><body><p class="a">1</p><p id="b">2</p><p class="c d">3</p><p class="c">4</p><p data-x="y">5</p></body></html>',
    );
    expect(removeStylesheetHidden(document as never, 0)).toBe(4);
    expect(document.body.textContent).toBe('4');
  });

  it.each([
    ['p', 1],
    ['.a', 1_000],
    ['#a', 1_000_000],
    ['div p.a:hover', 2_002],
    ['a[href]', 1_001],
    ['p::before', 2],
    [':where(.a, #b) p', 1],
    [':not(#a) .b', 1_001_000],
    ['ul > li + li', 3],
  ])('specificity of %j', (selector, expected) => {
    expect(specificity(selector)).toBe(expected);
  });
});

// Where no DOM is built — a page over 5 MB, an article extraction that ran out of time or whose
// worker failed — the whole-page converter reads the `<style>` rules itself, by the classes and
// id they name (no cascade: it fails closed). Padding a page past 5 MB let hidden text through.
describe('the whole-page converter', () => {
  const styled = `<style>.x{display:none} #gone{visibility:hidden} @media screen{.m .deep{font-size:0}} [data-secret="1"]{display:none} div [data-note]{opacity:0} p[title^="a b"]{display:none}</style>`;
  const body =
    '<p class="x">HIDDEN-A</p><p id="gone">HIDDEN-B</p><div class="m"><p class="deep">HIDDEN-C</p></div><p data-secret="1">HIDDEN-D</p><p data-note>HIDDEN-E</p><p title="a b c">HIDDEN-F</p><p class="y">VISIBLE-A</p><p class="xx">VISIBLE-B</p><p data-secret="2">VISIBLE-C</p>';

  it('htmlToText leaves out what the page’s stylesheets hide by class or id', () => {
    const { text } = htmlToText(`<html><head>${styled}</head><body>${body}</body></html>`);
    expect(text.match(/HIDDEN-\w/g) ?? []).toEqual([]);
    expect(text).toContain('VISIBLE-A');
    expect(text).toContain('VISIBLE-B');
    expect(text).toContain('VISIBLE-C');
  });

  it('a page padded past 5 MB (no DOM built) keeps them out too', () => {
    const padding = `<p>${'filler words for size. '.repeat(40)}</p>`.repeat(6_000);
    const page = `<html><head>${styled}</head><body>${padding}${body}</body></html>`;
    expect(page.length).toBeGreaterThan(5_000_000);
    const result = htmlToMarkdown(page);
    expect(result.extracted).toBe('page');
    expect(result.text.match(/HIDDEN-\w/g) ?? []).toEqual([]);
    expect(result.text).toContain('VISIBLE-A');
  });

  it('a page whose worker fails is converted whole without them', async () => {
    const words = `<p>${'Real article words about the subject matter of this page. '.repeat(400)}</p>`;
    const page = `<html><head>${styled}</head><body><article>${words}${body}</article></body></html>`;
    const missing = new URL('./__fixtures__/no-such-worker.mjs', import.meta.url);
    const result = await convertHtml(page, { workerUrl: missing });
    expect(result.extracted).toBe('page');
    expect(result.text.match(/HIDDEN-\w/g) ?? []).toEqual([]);
  });

  it('when the DOM path judged the cascade, the whole-page converter does not second-guess it', () => {
    // `.later` is hidden then shown again: visible. No article: the page is converted whole.
    const page =
      '<html><head><style>.later{display:none} .later{display:block}</style></head><body><ul><li>a</li></ul><p class="later">VISIBLE-C</p></body></html>';
    expect(htmlToMarkdown(page).text).toContain('VISIBLE-C');
  });

  it.each([
    [[], undefined],
    [['.a{color:red}'], undefined],
    [['p{display:none}'], undefined],
  ])('sheetHidingMatcher(%j): nothing to apply by class or id', (styles, expected) => {
    expect(sheetHidingMatcher(styles)).toBe(expected);
  });
});
