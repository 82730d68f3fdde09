import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, isRepeatable, toolResultText } from '@agent/core';
import { CrashableRunJournal, createScriptedProvider } from '@agent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { idempotencyKeyFor } from './idempotency.js';
import { OpenApiToolAdapter, type OpenApiToolOptions } from './openapi-tool-adapter.js';
import { callTool } from './test-helpers.js';

const quiet: OpenApiToolOptions = { onWarning: () => undefined };

const operations = {
  '/charges': {
    get: { operationId: 'listCharges', responses: { '200': { description: 'ok' } } },
    post: { operationId: 'createCharge', responses: { '200': { description: 'ok' } } },
  },
  '/charges/{id}': {
    parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
    put: { operationId: 'replaceCharge', responses: { '200': { description: 'ok' } } },
    patch: { operationId: 'updateCharge', responses: { '200': { description: 'ok' } } },
    delete: { operationId: 'deleteCharge', responses: { '200': { description: 'ok' } } },
    head: { operationId: 'headCharge', responses: { '200': { description: 'ok' } } },
    options: { operationId: 'chargeOptions', responses: { '200': { description: 'ok' } } },
  },
  '/refunds': {
    post: {
      operationId: 'createRefund',
      parameters: [
        { name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string' } },
      ],
      responses: { '200': { description: 'ok' } },
    },
  },
};

function document(url: string) {
  return {
    openapi: '3.0.3',
    info: { title: 'Payments', version: '1' },
    servers: [{ url }],
    paths: operations,
  };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  }
});

async function listen(handler: (request: IncomingMessage, response: ServerResponse) => void) {
  const server = createServer(handler);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A server that records each request's method and Idempotency-Key, and answers at once. */
async function recordingServer() {
  const seen: { method: string; key: string | undefined }[] = [];
  const url = await listen((request, response) => {
    const key = request.headers['idempotency-key'];
    seen.push({ method: request.method ?? '', key: typeof key === 'string' ? key : undefined });
    response.setHeader('content-type', 'application/json');
    response.end('{"ok":true}');
  });
  return { url, seen };
}

describe('which operations are safe to repeat', () => {
  it.each([
    ['listCharges', true],
    ['headCharge', true],
    ['chargeOptions', true],
    ['replaceCharge', true],
    ['deleteCharge', true],
    ['createCharge', false],
    ['updateCharge', false],
    // It declares the header we fill in: its server deduplicates a repeat.
    ['createRefund', true],
  ])('%s → repeatable %s', (name, expected) => {
    const adapter = OpenApiToolAdapter.fromSpec(document('http://127.0.0.1:1'), quiet);
    expect(isRepeatable(adapter.tools.find((tool) => tool.name === name))).toBe(expected);
  });

  it('takes the policy option over the method, and a read-only POST as repeatable', () => {
    const forced = OpenApiToolAdapter.fromSpec(document('http://127.0.0.1:1'), {
      ...quiet,
      policy: { repeatable: false },
    });
    expect(isRepeatable(forced.tools.find((tool) => tool.name === 'listCharges'))).toBe(false);
    const readOnly = OpenApiToolAdapter.fromSpec(document('http://127.0.0.1:1'), {
      ...quiet,
      permission: () => 'read-only',
    });
    expect(isRepeatable(readOnly.tools.find((tool) => tool.name === 'createCharge'))).toBe(true);
  });

  it('does not ask the model for an Idempotency-Key it fills in itself', () => {
    const adapter = OpenApiToolAdapter.fromSpec(document('http://127.0.0.1:1'), quiet);
    const refund = adapter.tools.find((tool) => tool.name === 'createRefund');
    expect(Object.keys(refund?.parameters.properties ?? {})).not.toContain('Idempotency-Key');
    const off = OpenApiToolAdapter.fromSpec(document('http://127.0.0.1:1'), {
      ...quiet,
      idempotencyKeys: false,
    });
    const asked = off.tools.find((tool) => tool.name === 'createRefund');
    expect(JSON.stringify(asked?.parameters)).toContain('Idempotency-Key');
    expect(isRepeatable(asked)).toBe(false);
  });
});

describe('the Idempotency-Key header', () => {
  it('goes with unsafe methods only', async () => {
    const { url, seen } = await recordingServer();
    const adapter = OpenApiToolAdapter.fromSpec(document(url), quiet);
    for (const [name, args] of [
      ['listCharges', {}],
      ['createCharge', {}],
      ['updateCharge', { id: 'c1' }],
      ['replaceCharge', { id: 'c1' }],
      ['deleteCharge', { id: 'c1' }],
      ['createRefund', {}],
    ] as const) {
      await callTool(
        adapter.tools.find((tool) => tool.name === name),
        args,
      );
    }
    expect(seen.map(({ method, key }) => [method, key !== undefined])).toEqual([
      ['GET', false],
      ['POST', true],
      ['PATCH', true],
      ['PUT', false],
      ['DELETE', false],
      ['POST', true],
    ]);
  });

  it('is the same for the same run and call, and differs when either differs', async () => {
    const key = (runId: string | undefined, toolCallId: string) =>
      idempotencyKeyFor({
        toolCallId,
        ...(runId === undefined ? {} : { run: { runId, agentPath: [], depth: 0 } as never }),
      });
    const base = await key('run-1', 'call-1');
    expect(await key('run-1', 'call-1')).toBe(base);
    const others = await Promise.all([
      key('run-2', 'call-1'),
      key('run-1', 'call-2'),
      key(undefined, 'call-1'),
      // A separator that cannot be confused: ('run-1\n', 'call') is not ('run-1', '\ncall').
      key('run-1\ncall', '-1'),
    ]);
    expect(new Set([base, ...others]).size).toBe(5);
    expect(base).toMatch(/^agent-[0-9a-f]{40}$/);
  });

  it('leaves a key set by the headers option alone, and sends none when turned off', async () => {
    const { url, seen } = await recordingServer();
    const own = OpenApiToolAdapter.fromSpec(document(url), {
      ...quiet,
      headers: { 'Idempotency-Key': 'mine' },
    });
    await callTool(
      own.tools.find((tool) => tool.name === 'createCharge'),
      {},
    );
    const off = OpenApiToolAdapter.fromSpec(document(url), { ...quiet, idempotencyKeys: false });
    await callTool(
      off.tools.find((tool) => tool.name === 'createCharge'),
      {},
    );
    expect(seen.map((request) => request.key)).toEqual(['mine', undefined]);
  });
});

describe('a POST running when its process died', () => {
  /**
   * Runs an agent that calls `operation` once; the server holds the first request open and the
   * process "dies" while it waits. A second agent resumes the run from the journal.
   */
  async function crashDuringRequest(operation: string) {
    const seen: (string | undefined)[] = [];
    const performed = new Set<string | undefined>();
    let firstArrived: () => void = () => {};
    const arrived = new Promise<void>((resolve) => {
      firstArrived = resolve;
    });
    const url = await listen((request, response) => {
      const key = request.headers['idempotency-key'];
      const value = typeof key === 'string' ? key : undefined;
      seen.push(value);
      // The server deduplicates by key, as Stripe does: a repeat is answered, not performed.
      const repeat = value !== undefined && performed.has(value);
      performed.add(value);
      if (seen.length === 1) {
        firstArrived();
        return; // held open: the process dies while waiting for the answer
      }
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ refunded: true, repeat }));
    });
    const journal = new CrashableRunJournal();
    const call = { id: 'refund-1', name: operation, arguments: {} };
    const first = new Agent({
      provider: createScriptedProvider([{ toolCalls: [call] }, { text: 'done' }]),
      model: 'test',
      tools: OpenApiToolAdapter.fromSpec(document(url), quiet).tools,
      journal,
    });
    const run = first.run('refund it');
    await arrived;
    journal.crash();
    const resumed = new Agent({
      provider: createScriptedProvider([{ text: 'refund handled' }]),
      model: 'test',
      tools: OpenApiToolAdapter.fromSpec(document(url), quiet).tools,
      journal: journal.inner,
    });
    const result = await resumed.run(undefined, { runId: run.runId }).result;
    const answer = resumed.messages.find((message) => message.role === 'toolResult');
    return { seen, result, answer };
  }

  it('is repeated with the same key when the server declares it deduplicates', async () => {
    const { seen, result, answer } = await crashDuringRequest('createRefund');
    expect(result.stopReason).toBe('completed');
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBeDefined();
    expect(seen[1]).toBe(seen[0]);
    expect(answer?.role === 'toolResult' && toolResultText(answer.content)).toMatch(
      /"repeat": ?true/,
    );
  });

  it('is reported as interrupted, never sent again, when the server does not say so', async () => {
    const { seen, result, answer } = await crashDuringRequest('createCharge');
    expect(result.stopReason).toBe('completed');
    expect(seen).toHaveLength(1);
    expect(answer?.role === 'toolResult' && answer.errorKind).toBe('interrupted');
  });
});
