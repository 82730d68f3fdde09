// Instructions a page hides from its reader but not from the model: elements a browser does not
// show (display:none, visibility:hidden, zero font size or opacity, templates, SVG text). Before
// the fix the whole-page converter returned display:none and visibility:hidden text, and the
// article path returned `display: none !important`, `DISPLAY:NONE`, zero-size and transparent
// text (and, as plain text, template and SVG text).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { executeTool, toolResultText } from '@agent/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hiddenByStyle } from './hidden-content.js';
import { createWebFetchTool } from './web-fetch.js';

const hidden = [
  '<div style="display:none">HIDDEN-1</div>',
  '<div style="color: red; display: none !important">HIDDEN-2</div>',
  '<div style="visibility:hidden">HIDDEN-3</div>',
  '<div style="visibility: collapse">HIDDEN-4</div>',
  '<div style="DISPLAY:NONE">HIDDEN-5</div>',
  '<span style="font-size:0">HIDDEN-6</span>',
  '<span style="font-size: 0px">HIDDEN-7</span>',
  '<span style="font-size:0.0em;">HIDDEN-8</span>',
  '<span style="opacity:0">HIDDEN-9</span>',
  '<span style="opacity: .0 ! important">HIDDEN-10</span>',
  '<template><p>HIDDEN-11</p></template>',
  '<svg><text>HIDDEN-12</text></svg>',
  '<div hidden>HIDDEN-13</div>',
  '<div aria-hidden="true">HIDDEN-14</div>',
  '<div style="display:none"><p>HIDDEN-15 <b>nested</b></p></div>',
];
const visible = [
  '<span style="opacity:0.5">VISIBLE-1</span>',
  '<span style="font-size:0.9em">VISIBLE-2</span>',
  '<div style="display:block">VISIBLE-3</div>',
  '<span class="sr-only">VISIBLE-4</span>',
  '<details><summary>More</summary>VISIBLE-5</details>',
  '<div style="background: url(display:none.png)">VISIBLE-6</div>',
];
const words = `<p>${'Real article words about the subject matter of this page. '.repeat(30)}</p>`;
const pages: Record<string, string> = {
  '/article': `<html><head><title>T</title></head><body><article><h1>Title</h1>${words}${hidden.join('\n')}${visible.join('\n')}${words}</article></body></html>`,
  '/page': `<html><head><title>T</title></head><body><ul><li><a href="/a">a</a></li></ul>${hidden.join('\n')}${visible.join('\n')}</body></html>`,
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

describe('text a browser does not show is left out', () => {
  it.each([
    ['the article path', '/article', 'markdown'],
    ['the article path, as text', '/article', 'text'],
    ['the whole-page path', '/page', 'markdown'],
    ['the whole-page path, as text', '/page', 'text'],
  ])('%s', async (_name, path, format) => {
    const message = await executeTool(tool, { url: `${origin}${path}`, format });
    const text = toolResultText(message.content);
    expect(text.match(/HIDDEN-\d+/g) ?? []).toEqual([]);
    const shown = (text.match(/VISIBLE-\d+/g) ?? []).sort();
    expect(shown).toEqual([
      'VISIBLE-1',
      'VISIBLE-2',
      'VISIBLE-3',
      'VISIBLE-4',
      'VISIBLE-5',
      'VISIBLE-6',
    ]);
  });

  it.each([
    ['display:none', true],
    ['  display :  none  ', true],
    ['color:red;display:none;', true],
    ['visibility:hidden!important', true],
    ['font-size:0%', true],
    ['opacity:0.0', true],
    ['opacity:0.01', false],
    ['font-size:0.5em', false],
    ['display:none-ish', false],
    ['content:"display:none"', false],
    ['', false],
  ])('style %j hides: %s', (style, expected) => {
    expect(hiddenByStyle(style)).toBe(expected);
  });
});
