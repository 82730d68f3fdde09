import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { Agent, ToolError, type ToolResultMessage } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateAddressReason } from './network-guard.js';
import { resultText, testContext } from './test-helpers.js';
import { createWebFetchTool, type WebFetchToolOptions } from './web-fetch.js';

const png = fs.readFileSync(path.join(import.meta.dirname, '__fixtures__', 'tiny.png'));
// A real news page (Ars Technica, from Mozilla Readability's test corpus): navigation, ads, footer.
const article = fs.readFileSync(path.join(import.meta.dirname, '__fixtures__', 'article.html'));

const page = `<!DOCTYPE html>
<html><head><title>Docs &amp; Notes</title>
<style>body { color: red }</style>
<script>document.write("<p>injected</p>")</script></head>
<body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<h1>Getting started</h1>
<p>Read the <a href="/docs/install?x=1">install guide</a> &mdash; it&#39;s short &amp; sweet &lt;really&gt;.</p>
<h2>Steps</h2>
<ul><li>Install</li><li>Configure <code>agent.json</code></li></ul>
<ol><li>first</li><li>second</li></ol>
<pre><code class="language-sh">pnpm add @agent/core
echo "a &lt; b"</code></pre>
<footer>Copyright 2026</footer>
</body></html>`;

interface Served {
  origin: string;
  port: number;
  requests: string[];
  hugeClosed: Promise<{ written: number; ended: boolean }>;
  slowRequested: Promise<void>;
  slowClosed: Promise<void>;
  close: () => Promise<void>;
}

function deferred<T>() {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

async function serve(): Promise<Served> {
  const requests: string[] = [];
  const hugeClosed = deferred<{ written: number; ended: boolean }>();
  const slowRequested = deferred<void>();
  const slowClosed = deferred<void>();
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    requests.push(url.pathname);
    const send = (status: number, type: string | undefined, body: string | Buffer) => {
      response.writeHead(status, type === undefined ? {} : { 'content-type': type });
      response.end(body);
    };
    const redirect = url.pathname.match(/^\/redirect\/(\d+)$/);
    if (redirect !== null) {
      const left = Number(redirect[1]);
      response.writeHead(302, { location: left === 0 ? '/page.html' : `/redirect/${left - 1}` });
      response.end();
      return;
    }
    switch (url.pathname) {
      case '/page.html':
        return send(200, 'text/html; charset=utf-8', page);
      case '/article.html':
        return send(200, 'text/html; charset=utf-8', article);
      case '/gzip.html': {
        response.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
        response.end(zlib.gzipSync(page));
        return;
      }
      case '/bomb': {
        // 64 MiB of 'a' compress to about 64 KiB: the cap must apply to the decompressed bytes.
        response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
        response.end(zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024, 'a')));
        return;
      }
      case '/data.json':
        return send(200, 'application/json', '{"name":"agent","tags":["a","b"],"nested":{"n":1}}');
      case '/latin1.txt':
        return send(
          200,
          'text/plain; charset=iso-8859-1',
          Buffer.from('café naïve façade', 'latin1'),
        );
      case '/meta-latin1.html':
        return send(
          200,
          'text/html',
          Buffer.from(
            '<html><head><meta charset="iso-8859-1"></head><body><p>Grüße</p></body></html>',
            'latin1',
          ),
        );
      case '/long.txt':
        return send(200, 'text/plain', 'abcdefghij'.repeat(100));
      case '/image.png':
        return send(200, 'image/png', png);
      case '/blob.bin':
        return send(
          200,
          'application/octet-stream',
          Buffer.from([0, 1, 2, 3, 0, 255, 254, 0, 7, 8]),
        );
      case '/missing':
        return send(
          404,
          'text/html',
          '<html><body><h1>Not here</h1><p>No such page.</p></body></html>',
        );
      case '/cross':
        response.writeHead(301, { location: `http://localhost:${port()}/page.html` });
        response.end();
        return;
      case '/to-www':
        response.writeHead(302, { location: `http://www.site.test:${port()}/page.html` });
        response.end();
        return;
      case '/slow':
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.write('partial');
        response.on('close', () => slowClosed.resolve());
        slowRequested.resolve();
        return; // never ends
      case '/huge': {
        response.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let written = 0;
        response.on('close', () => hugeClosed.resolve({ written, ended: response.writableEnded }));
        // Writes for ever, honouring back-pressure: only the client closing the connection stops it.
        const pump = () => {
          while (!response.destroyed) {
            written += chunk.length;
            if (!response.write(chunk)) {
              response.once('drain', pump);
              return;
            }
          }
        };
        pump();
        return;
      }
      default:
        return send(404, 'text/plain', 'unknown');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = () => (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port()}`,
    port: port(),
    requests,
    hugeClosed: hugeClosed.promise,
    slowRequested: slowRequested.promise,
    slowClosed: slowClosed.promise,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let served: Served;
beforeAll(async () => {
  served = await serve();
});
afterAll(async () => {
  await served.close();
});

const local = (options: WebFetchToolOptions = {}) =>
  createWebFetchTool({ allowPrivateNetwork: true, ...options });

async function toolError(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!ToolError.isInstance(error)) throw new Error(`expected a ToolError, got ${String(error)}`);
  return error;
}

describe('web_fetch content', () => {
  it('keeps the main article of a real page and leaves navigation and footers out', async () => {
    const result = await local().execute({ url: `${served.origin}/article.html` }, testContext());
    const text = resultText(result);
    expect(result.details?.extracted).toBe('article');
    expect(text).toContain('Content: the main article');
    expect(text).toContain('# Just-released Minecraft exploit makes it easy to crash game servers');
    expect(text).toContain('A flaw in the wildly popular online game *Minecraft* makes it easy');
    // Relative links are made absolute against the page's URL.
    expect(text).toMatch(/\]\(https?:\/\/[^)]+\)/);
    expect(text).not.toContain('Staff Directory');
    expect(text).not.toContain('Advertise with Ars');
    // The whole page, as sent, is still there with format "raw".
    const raw = resultText(
      await local().execute(
        { url: `${served.origin}/article.html`, format: 'raw', max_chars: 100_000 },
        testContext(),
      ),
    );
    expect(raw).toContain('Staff Directory');
  });

  it('converts HTML to Markdown without scripts, styles or navigation', async () => {
    const result = await local().execute({ url: `${served.origin}/page.html` }, testContext());
    const text = resultText(result);
    expect(text).toContain(`URL: ${served.origin}/page.html`);
    expect(text).toContain('Title: Docs & Notes');
    expect(text).toContain('# Getting started');
    expect(text).toContain('## Steps');
    expect(text).toContain(
      `Read the [install guide](${served.origin}/docs/install?x=1) — it's short & sweet <really>.`,
    );
    expect(text).toContain('- Install\n- Configure `agent.json`');
    expect(text).toContain('1. first\n2. second');
    expect(text).toContain('```sh\npnpm add @agent/core\necho "a < b"\n```');
    for (const noise of ['color: red', 'injected', 'About', 'Copyright'])
      expect(text).not.toContain(noise);
    expect(result.isError).toBeUndefined();
    expect(result.details?.title).toBe('Docs & Notes');
  });

  it('gives plain text or the raw body on request, and decompresses gzip', async () => {
    const plain = resultText(
      await local().execute({ url: `${served.origin}/page.html`, format: 'text' }, testContext()),
    );
    expect(plain).toContain('Read the install guide — it');
    expect(plain).not.toContain('](');
    expect(plain).not.toContain('# Getting');
    const raw = resultText(
      await local().execute({ url: `${served.origin}/page.html`, format: 'raw' }, testContext()),
    );
    expect(raw).toContain('<script>document.write');
    const gzip = resultText(
      await local().execute({ url: `${served.origin}/gzip.html` }, testContext()),
    );
    expect(gzip).toContain('# Getting started');
  });

  it('pretty-prints JSON and decodes latin1 from the header or a meta tag', async () => {
    const json = resultText(
      await local().execute({ url: `${served.origin}/data.json` }, testContext()),
    );
    expect(json).toContain('{\n  "name": "agent",\n  "tags": [\n    "a",\n    "b"\n  ],');
    const latin1 = resultText(
      await local().execute({ url: `${served.origin}/latin1.txt` }, testContext()),
    );
    expect(latin1).toContain('café naïve façade');
    const meta = resultText(
      await local().execute({ url: `${served.origin}/meta-latin1.html` }, testContext()),
    );
    expect(meta).toContain('Grüße');
  });

  it('returns a PNG as image content and describes other binaries', async () => {
    const image = await local().execute({ url: `${served.origin}/image.png` }, testContext());
    const part = image.content[1];
    expect(part?.type).toBe('image');
    if (part?.type === 'image') {
      expect(part.mimeType).toBe('image/png');
      expect(Buffer.from(part.data, 'base64').equals(png)).toBe(true);
    }
    const small = await local({ maxImageBytes: 10 }).execute(
      { url: `${served.origin}/image.png` },
      testContext(),
    );
    expect(small.content.every((item) => item.type === 'text')).toBe(true);
    expect(resultText(small)).toContain('larger than the 10-byte limit');
    const blob = resultText(
      await local().execute({ url: `${served.origin}/blob.bin` }, testContext()),
    );
    expect(blob).toContain('Binary content');
    expect(blob).not.toContain('\u0000');
  });

  it('reports a 404 as an error result with the status and a body excerpt', async () => {
    const result = await local().execute({ url: `${served.origin}/missing` }, testContext());
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(/^HTTP 404 Not Found from /);
    expect(resultText(result)).toContain('No such page.');
    expect(result.details?.status).toBe(404);
  });

  it('pages through long content by character offset', async () => {
    const tool = local();
    const first = await tool.execute(
      { url: `${served.origin}/long.txt`, max_chars: 300 },
      testContext(),
    );
    expect(resultText(first)).toContain('[Characters 0-300 of 1000; use offset 300 to continue]');
    expect(first.details?.nextOffset).toBe(300);
    const last = await tool.execute(
      { url: `${served.origin}/long.txt`, offset: 900, max_chars: 300 },
      testContext(),
    );
    expect(resultText(last)).toContain('[Characters 900-1000 of 1000]');
    expect(last.details?.nextOffset).toBeUndefined();
    const past = await toolError(
      tool.execute({ url: `${served.origin}/long.txt`, offset: 1000 }, testContext()),
    );
    expect(past.kind).toBe('invalid-args');
    expect(tool.validate?.({ url: 'http://a.b', max_chars: 10_000_000 }).ok).toBe(false);
  });
});

describe('web_fetch redirects, limits and errors', () => {
  it('follows same-host redirects up to the limit and names the final URL', async () => {
    const result = await local().execute({ url: `${served.origin}/redirect/3` }, testContext());
    expect(result.details?.finalUrl).toBe(`${served.origin}/page.html`);
    expect(resultText(result)).toContain(`Redirected from: ${served.origin}/redirect/3`);
    const error = await toolError(
      local().execute({ url: `${served.origin}/redirect/7` }, testContext()),
    );
    expect(error.kind).toBe('failed');
    expect(error.message).toContain('Too many redirects: more than 5');
  });

  it('reports a redirect to another host instead of following it', async () => {
    const before = served.requests.length;
    const result = await local().execute({ url: `${served.origin}/cross` }, testContext());
    expect(result.details?.redirectUrl).toBe(`http://localhost:${served.port}/page.html`);
    expect(resultText(result)).toContain('Redirects to another host are not followed');
    expect(served.requests.slice(before)).toEqual(['/cross']);
  });

  it('stops reading a huge body at the cap and closes the connection', async () => {
    const result = await local({ maxResponseBytes: 1024 * 1024 }).execute(
      { url: `${served.origin}/huge`, max_chars: 100 },
      testContext(),
    );
    expect(result.details?.bodyTruncated).toBe(true);
    expect(result.details?.bytesRead).toBe(1024 * 1024);
    expect(resultText(result)).toContain('The body was cut at 1.0 MiB');
    // The server writes until its connection closes: this only resolves because the client closed it.
    const seen = await served.hugeClosed;
    expect(seen.ended).toBe(false);
    expect(seen.written).toBeLessThan(256 * 1024 * 1024);
  });

  it('caps the decompressed size of a gzip body, not the bytes on the wire', async () => {
    const result = await local({ maxResponseBytes: 1024 * 1024 }).execute(
      { url: `${served.origin}/bomb`, max_chars: 10 },
      testContext(),
    );
    expect(result.details?.bodyTruncated).toBe(true);
    expect(result.details?.bytesRead).toBe(1024 * 1024);
    expect(result.details?.totalChars).toBe(1024 * 1024);
  });

  it('aborts a slow request when the call is cancelled, and times out on its own', async () => {
    const controller = new AbortController();
    const call = local().execute(
      { url: `${served.origin}/slow` },
      testContext({ signal: controller.signal }),
    );
    await served.slowRequested;
    controller.abort();
    const error = await toolError(call);
    expect(error.kind).toBe('cancelled');
    await served.slowClosed;
    const timedOut = await toolError(
      local({ timeoutMs: 50 }).execute({ url: `${served.origin}/slow` }, testContext()),
    );
    expect(timedOut.kind).toBe('timeout');
    expect(timedOut.message).toContain('took longer than 50 ms');
  });

  it('turns network failures into clear errors and refuses other schemes', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = await toolError(
      local().execute({ url: `http://127.0.0.1:${port}/` }, testContext()),
    );
    expect(refused.kind).toBe('failed');
    expect(refused.message).toBe(
      `Could not fetch http://127.0.0.1:${port}/: the connection was refused (ECONNREFUSED)`,
    );
    for (const url of ['file:///etc/passwd', 'ftp://example.com/x', 'not a url']) {
      const error = await toolError(local().execute({ url }, testContext()));
      expect(error.kind).toBe('invalid-args');
    }
  });

  it('uses origin and path as the permission subject, without credentials or query', async () => {
    const subjects = await local().permissionSubjects?.({
      url: 'https://user:secret@example.com/docs/a?q=1#top',
    });
    expect(subjects).toEqual(['https://example.com/docs/a']);
    expect(await local().permissionSubjects?.({ url: 'file:///etc/passwd' })).toEqual([
      'file:///etc/passwd',
    ]);
    expect(local().policy?.permission).toBe('full-access');
    expect(local().policy?.exclusive).toBeUndefined();
  });
});

describe('web_fetch private-network guard', () => {
  const fakeDns: WebFetchToolOptions['lookup'] = (_hostname, _options, callback) =>
    callback(null, [{ address: '127.0.0.1', family: 4 }]);

  it('refuses loopback by default, before any request is sent', async () => {
    const before = served.requests.length;
    for (const url of [
      `${served.origin}/page.html`,
      `http://[::ffff:127.0.0.1]:${served.port}/page.html`,
      `http://2130706433:${served.port}/page.html`,
      `http://0x7f.1:${served.port}/page.html`,
    ]) {
      const error = await toolError(createWebFetchTool().execute({ url }, testContext()));
      expect(error.kind).toBe('denied');
      expect(error.message).toContain('loopback');
    }
    const named = await toolError(
      createWebFetchTool().execute(
        { url: `http://localhost:${served.port}/page.html` },
        testContext(),
      ),
    );
    expect(named.kind).toBe('denied');
    expect(served.requests.length).toBe(before);
  });

  it('checks the resolved address of every hop, redirects included', async () => {
    const before = served.requests.length;
    const refused = await toolError(
      createWebFetchTool({ lookup: fakeDns }).execute(
        { url: `http://site.test:${served.port}/page.html` },
        testContext(),
      ),
    );
    expect(refused.kind).toBe('denied');
    expect(refused.message).toContain('site.test resolves to 127.0.0.1, a loopback address');
    // site.test is let through; its redirect to www.site.test (same site, so followed) is not.
    const tool = createWebFetchTool({
      lookup: fakeDns,
      allowPrivateAddress: (host) => host === 'site.test',
    });
    const allowed = await tool.execute(
      { url: `http://site.test:${served.port}/page.html` },
      testContext(),
    );
    expect(resultText(allowed)).toContain('# Getting started');
    const redirected = await toolError(
      tool.execute({ url: `http://site.test:${served.port}/to-www` }, testContext()),
    );
    expect(redirected.kind).toBe('denied');
    expect(redirected.message).toContain('www.site.test resolves to 127.0.0.1');
    expect(served.requests.slice(before)).toEqual(['/page.html', '/to-www']);
  });

  it('classifies addresses, IPv4-mapped IPv6 included', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:10.0.0.1',
      '::ffff:7f00:1',
    ])
      expect(privateAddressReason(address), address).toBeDefined();
    // Every special-purpose range that can map onto a private address, many spellings each.
    for (const address of [
      '64:ff9b::a00:1',
      '64:ff9b::10.0.0.1',
      '64:ff9b::7f00:1',
      '64:ff9b::c0a8:101',
      '64:ff9b::8.8.8.8',
      '64:ff9b:1::a00:1',
      '64:ff9b:1:ffff::1',
      '0064:ff9b:0000:0000:0000:0000:0a00:0001',
      '::10.0.0.1',
      '::127.0.0.1',
      '::ffff:0:10.0.0.1',
      '::ffff:0:7f00:1',
      '::ffff:10.0.0.1',
      '::ffff:7f00:1',
      '::ffff:169.254.169.254',
      '2002:a00:1::',
      '2002:7f00:1::1',
      '2002:c0a8:101::',
      '2001:0:4136:e378:8000:63bf:f5ff:fffe',
      '2001::1',
      '2001:db8::1',
      '100::1',
      'fec0::1',
      'fd00:ec2::254',
      'fe80::1%1',
      '192.0.2.1',
      '198.51.100.7',
      '203.0.113.9',
      '192.88.99.1',
      '255.255.255.255',
      '0.0.0.0',
      '100.100.100.200',
    ])
      expect(privateAddressReason(address.replace(/%.*$/, '')), address).toBeDefined();
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      'example.com',
    ])
      expect(privateAddressReason(address), address).toBeUndefined();
  });
});

describe('web_fetch in an agent run', () => {
  it('runs through the Agent loop with a scripted provider', async () => {
    const tools = [createWebFetchTool({ allowPrivateNetwork: true })];
    const provider = createScriptedProvider([
      { toolCalls: [{ name: 'web_fetch', arguments: { url: `${served.origin}/page.html` } }] },
      { text: 'done' },
    ]);
    const outcome = await new Agent({ provider, model: 'scripted', tools }).run('go').result;
    const results = outcome.messages.filter((m): m is ToolResultMessage => m.role === 'toolResult');
    expect(results.map((r) => r.isError)).toEqual([false]);
    const texts = results.map((r) =>
      r.content.map((part) => (part.type === 'text' ? part.text : '')).join(''),
    );
    expect(texts[0]).toContain('# Getting started');
  });
});
