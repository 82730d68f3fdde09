// Cancellation over stateless Streamable HTTP: the SDK's client cancels a call by POSTing
// `notifications/cancelled` and leaves the call's own response open, so the notification reached
// a fresh server instance and the tool ran on to its end (a served `bash` finished its command).
// Real server on 127.0.0.1, the SDK's client and raw requests.
import { defineTool } from '@agent/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { serveHttp } from './serve-http.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A tool that runs until its signal aborts; each run reports its start and its abort. */
function waitingTool() {
  const started: string[] = [];
  const aborted: string[] = [];
  let onStart: (label: string) => void = () => undefined;
  let onAbort: (label: string) => void = () => undefined;
  const tool = defineTool({
    name: 'wait',
    description: 'Waits until cancelled.',
    input: z.object({ label: z.string() }),
    policy: { permission: 'read-only' },
    execute: ({ label }, ctx) =>
      new Promise<string>((resolve) => {
        started.push(label);
        onStart(label);
        ctx.signal.addEventListener('abort', () => {
          aborted.push(label);
          onAbort(label);
          resolve(`${label} stopped`);
        });
      }),
  });
  const nextStart = () => new Promise<string>((resolve) => (onStart = resolve));
  const nextAbort = () => new Promise<string>((resolve) => (onAbort = resolve));
  return { tool, started, aborted, nextStart, nextAbort };
}

async function client(url: string, headers: Record<string, string>): Promise<Client> {
  const sdk = new Client({ name: 'sdk', version: '1' });
  await sdk.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  cleanups.push(() => sdk.close());
  return sdk;
}

function post(url: string, headers: Record<string, string>, body: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      ...headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify(body),
  });
}

const cancel = (requestId: string | number) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  params: { requestId, reason: 'enough' },
});

describe('serveHttp: a cancelled call stops', () => {
  it('the SDK client aborting a call stops the tool on the server', async () => {
    const waiting = waitingTool();
    const served = await serveHttp({ tools: [waiting.tool] });
    cleanups.push(served.close);
    const sdk = await client(served.url, served.clientConfig.headers);
    const controller = new AbortController();
    const started = waiting.nextStart();
    const aborted = waiting.nextAbort();
    const call = sdk.callTool({ name: 'wait', arguments: { label: 'one' } }, undefined, {
      signal: controller.signal,
    });
    await started;
    controller.abort('enough');
    await expect(call).rejects.toThrow();
    expect(await aborted).toBe('one');
  });

  it('a cancel names one id: other calls run on; a batch may carry it; unknown ids are ignored', async () => {
    const waiting = waitingTool();
    const served = await serveHttp({ tools: [waiting.tool] });
    cleanups.push(served.close);
    const headers = served.clientConfig.headers;
    const call = (id: number, label: string) =>
      post(served.url, headers, {
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'wait', arguments: { label } },
      });
    let started = waiting.nextStart();
    const first = call(7, 'seven');
    await started;
    started = waiting.nextStart();
    const second = call(8, 'eight');
    await started;

    for (const unknown of [9, '7', 'x'])
      expect((await post(served.url, headers, cancel(unknown))).status).toBe(202);
    let aborted = waiting.nextAbort();
    expect((await post(served.url, headers, [cancel(7)])).status).toBe(202);
    expect(await aborted).toBe('seven');
    expect(await (await first).text()).toContain('{"type":"text","text":"Cancelled"}');
    expect(waiting.aborted).toEqual(['seven']);

    aborted = waiting.nextAbort();
    expect((await post(served.url, headers, cancel(8))).status).toBe(202);
    expect(await aborted).toBe('eight');
    expect(await (await second).text()).toContain('"id":8');
  });

  it('without the token a cancel is refused and stops nothing', async () => {
    const waiting = waitingTool();
    const served = await serveHttp({ tools: [waiting.tool] });
    cleanups.push(served.close);
    const started = waiting.nextStart();
    const running = post(served.url, served.clientConfig.headers, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'wait', arguments: { label: 'one' } },
    });
    await started;
    expect((await post(served.url, {}, cancel(1))).status).toBe(401);
    expect((await post(served.url, { Authorization: 'Bearer wrong' }, cancel(1))).status).toBe(401);
    expect(waiting.aborted).toEqual([]);
    // The control: with the token it stops.
    const aborted = waiting.nextAbort();
    await post(served.url, served.clientConfig.headers, cancel(1));
    expect(await aborted).toBe('one');
    await (await running).text();
  });
});
