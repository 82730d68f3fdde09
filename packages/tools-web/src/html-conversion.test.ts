// Large and hostile pages are taken apart in a worker thread: the agent's thread stays free, an
// abort ends the work at once, and a page too costly to take apart is converted whole instead.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as net from 'node:net';
import { executeTool } from '@agent/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertHtml, inThreadTreeWork, workerThresholdChars } from './html-conversion.js';
import { htmlToMarkdown } from './html-to-markdown.js';
import { createWebFetchTool } from './web-fetch.js';

// `turbo test` builds first: the tests run the worker that ships.
const workerUrl = new URL('../dist/html-worker.js', import.meta.url);

const paragraph = `<p>${'Lorem ipsum dolor sit amet, <a href="/x">a link</a>, consectetur <b>adipiscing</b> elit. '.repeat(20)}</p>\n`;
/** An ordinary article page of about `chars` characters. */
function articlePage(chars: number): string {
  return `<html><head><title>A long read</title></head><body><nav>Home | About</nav><article><h1>A long read</h1>${paragraph.repeat(Math.ceil(chars / paragraph.length))}</article><footer>© site</footer></body></html>`;
}
/** Deeply nested elements: seconds of Readability per MB on the agent's thread before. */
function nestedPage(depth: number, text: number): string {
  return `<html><body>${'<div>'.repeat(depth)}${'x'.repeat(text)}${'</div>'.repeat(depth)}</body></html>`;
}

describe('convertHtml', () => {
  it('gives what the converter gives, from the worker for a large page and in-thread for a small one', {
    timeout: 120_000,
  }, async () => {
    // Just over the threshold: the same conversion twice, each about a second on a busy machine.
    const large = articlePage(workerThresholdChars + 4096);
    const small = articlePage(8_000);
    const options = { baseUrl: 'https://example.com/' };
    const fromWorker = await convertHtml(large, { ...options, workerUrl });
    expect(fromWorker).toEqual(htmlToMarkdown(large, options));
    expect(fromWorker.extracted).toBe('article');
    expect(await convertHtml(small, { format: 'text', workerUrl })).toEqual(
      htmlToMarkdown(small, { format: 'text' }),
    );
  });

  it('an extraction over its time converts the page whole, in linear time', async () => {
    const page = nestedPage(20_000, 400_000);
    const result = await convertHtml(page, { workerUrl, articleTimeoutMs: 1 });
    expect(result.articleTimedOut).toBe(true);
    expect(result.extracted).toBe('page');
    expect(result.text).toContain('x'.repeat(1000));
  });

  it('an abort rejects with its reason and ends the worker', async () => {
    const controller = new AbortController();
    const converting = convertHtml(nestedPage(20_000, 400_000), {
      workerUrl,
      signal: controller.signal,
    });
    controller.abort(new Error('stop'));
    await expect(converting).rejects.toThrow('stop');
    await expect(convertHtml('<p>x</p>', { workerUrl, signal: controller.signal })).rejects.toThrow(
      'stop',
    );
  });

  it('a worker that fails (here: a missing file) gives the page whole, converted in linear time', async () => {
    const page = articlePage(workerThresholdChars * 2);
    const missing = new URL('./no-such-worker.js', workerUrl);
    // And one that cannot be started at all (not a file URL).
    expect(
      (await convertHtml(page, { workerUrl: new URL('https://example.com/w.js') })).extracted,
    ).toBe('page');
    const result = await convertHtml(page, { workerUrl: missing });
    expect(result.extracted).toBe('page');
    expect(result.articleTimedOut).toBeUndefined();
    expect(result.text).toContain('# A long read');
    expect(result.text).toContain('consectetur **adipiscing** elit');
  });
});

describe('web_fetch while a page is being taken apart', () => {
  let server: Server;
  let origin = '';
  /** Workers of the stand-in below that have started (each connects once). */
  let started: net.Server;
  const onStart: (() => void)[] = [];

  beforeAll(async () => {
    server = createServer((_request, response) => {
      response.setHeader('content-type', 'text/html');
      response.end(articlePage(workerThresholdChars * 2));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    started = net.createServer((socket) => {
      socket.destroy();
      onStart.shift()?.();
    });
    started.listen(0, '127.0.0.1');
    await once(started, 'listening');
    process.env.HANGING_WORKER_PORT = String((started.address() as AddressInfo).port);
  });
  afterAll(async () => {
    delete process.env.HANGING_WORKER_PORT;
    started.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  // A stand-in for a page that takes for ever to take apart: a worker that says it started, then
  // never answers.
  const hanging = new URL('./__fixtures__/hanging-html-worker.mjs', import.meta.url);

  it('an abort cancels the call at once (before: the agent’s thread was busy until the end)', async () => {
    const controller = new AbortController();
    onStart.length = 0;
    onStart.push(() => controller.abort());
    const tool = createWebFetchTool({ allowPrivateNetwork: true, htmlWorkerUrl: hanging });
    const result = await executeTool(
      tool,
      { url: `${origin}/long` },
      { signal: controller.signal },
    );
    expect(result.isError).toBe(true);
    const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
    expect(text).toMatch(/cancel/i);
  });

  it('an extraction over its time gives the whole page, and says so', async () => {
    const tool = createWebFetchTool({
      allowPrivateNetwork: true,
      htmlWorkerUrl: hanging,
      articleTimeoutMs: 200,
    });
    const result = await executeTool(tool, { url: `${origin}/long` });
    expect(result.isError).not.toBe(true);
    const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
    expect(text).toContain('Content: the whole page (finding its main article took too long');
    expect(text).toContain('consectetur **adipiscing** elit');
  });
});

// What a hostile page can cost the agent's own thread: a page under the worker's threshold is
// converted here, so Readability gets it only while its elements' depths add up to at most
// inThreadTreeWork. Before, every page under 256 kB went to Readability in this thread: 250 kB of
// elements nested 120 deep held it 13.7 s, 250 kB of links 8.1 s (measured at load ~20).
describe('the calling thread', () => {
  const words = `<p>${'Real article words about the subject of this page, long enough to count. '.repeat(8)}</p>`;
  /** `copies` articles each under `depth` nested `<div>`s. */
  const deepArticles = (depth: number, copies: number) =>
    `<html><body>${`${'<div>'.repeat(depth)}${words}${'</div>'.repeat(depth)}`.repeat(copies)}</body></html>`;

  it.each([
    ['120 deep, 3 times', deepArticles(120, 3)],
    ['90 deep, 4 times', deepArticles(90, 4)],
    ['60 deep, 8 times', deepArticles(60, 8)],
    ['40 deep, 12 times', deepArticles(40, 12)],
  ])('a small page too costly for Readability (%s) is converted whole, here', async (_, page) => {
    expect(page.length).toBeLessThan(workerThresholdChars);
    // A worker that never answers: only a conversion done in this thread can finish.
    const hanging = new URL('./__fixtures__/hanging-html-worker.mjs', import.meta.url);
    const result = await convertHtml(page, { workerUrl: hanging });
    expect(result.extracted).toBe('page');
    expect(result.text).toContain('Real article words');
    // The same page without the bound is Readability's (the article), so the bound is what cut it.
    expect(htmlToMarkdown(page).extracted).toBe('article');
  });

  it('an ordinary small article still gets Readability here', async () => {
    const page = articlePage(8_000);
    const hanging = new URL('./__fixtures__/hanging-html-worker.mjs', import.meta.url);
    expect((await convertHtml(page, { workerUrl: hanging })).extracted).toBe('article');
    expect(inThreadTreeWork).toBeGreaterThan(0);
  });

  it('a page from the threshold up goes to the worker', async () => {
    const page = articlePage(workerThresholdChars + 1024);
    expect(htmlToMarkdown(page).extracted).toBe('article');
    // A worker that cannot start: the page comes back whole, so the worker was asked.
    const missing = new URL('./__fixtures__/no-such-worker.mjs', import.meta.url);
    expect((await convertHtml(page, { workerUrl: missing })).extracted).toBe('page');
  });
});
