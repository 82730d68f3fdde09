// Against a real restate-server (from npm) and real worker processes on 127.0.0.1.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Message } from '@agent/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PendingApproval, PromptOutcome } from './agent-session.js';
import { type H2Balancer, startH2Balancer } from './test-support/h2-balancer.js';
import {
  type RestateServer,
  startRestateServer,
  startWorker,
  type Worker,
} from './test-support/restate-server.js';

const workerScript = fileURLToPath(new URL('./__fixtures__/worker.mjs', import.meta.url));

let server: RestateServer;
let balancer: H2Balancer;
const workers: Worker[] = [];
let log: string;

beforeAll(async () => {
  log = join(tmpdir(), `restate-effects-${process.pid}-${Date.now()}.log`);
  await writeFile(log, '');
  server = await startRestateServer();
  balancer = await startH2Balancer();
  for (let index = 0; index < 2; index++) await addWorker();
  await server.register(balancer.url);
});

afterAll(async () => {
  for (const worker of workers.splice(0)) await killWorker(worker);
  await balancer?.close();
  await server?.stop();
  await rm(log, { force: true });
});

async function addWorker(): Promise<Worker> {
  const worker = await startWorker(workerScript, { SIDE_EFFECTS_LOG: log });
  workers.push(worker);
  balancer.upstreams.push(worker.port);
  return worker;
}

async function killWorker(worker: Worker): Promise<void> {
  const at = balancer.upstreams.indexOf(worker.port);
  if (at >= 0) balancer.upstreams.splice(at, 1);
  const index = workers.indexOf(worker);
  if (index >= 0) workers.splice(index, 1);
  worker.process.kill('SIGKILL');
  await worker.exited;
}

/** Calls a handler of a session through the ingress, as any HTTP client would. */
async function call<T>(sessionId: string, handler: string, body?: unknown): Promise<T> {
  const response = await fetch(`${server.ingressUrl}/agent/${sessionId}/${handler}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body ?? null),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${handler} of ${sessionId}: ${response.status} ${text}`);
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

async function logLines(sessionId: string): Promise<string[]> {
  return (await readFile(log, 'utf8'))
    .split('\n')
    .filter((line) => line.startsWith(`${sessionId} `))
    .map((line) => line.slice(sessionId.length + 1));
}

describe('an agent session as a Restate virtual object', () => {
  it('runs a prompt to its end, each model call and tool call once, and keeps the conversation', async () => {
    const sessionId = `plain-${Date.now()}`;
    const outcome = await call<PromptOutcome>(sessionId, 'prompt', { prompt: 'charge a, c and d' });
    expect(outcome).toMatchObject({
      stopReason: 'completed',
      text: `all charged for ${sessionId}`,
      turns: 3,
    });
    expect((await logLines(sessionId)).sort()).toEqual(
      [
        'effect charge a',
        'effect charge c',
        'effect charge d',
        'effect lookup b',
        'model 0',
        'model 1',
        'model 2',
      ].sort(),
    );
    const messages = await call<Message[]>(sessionId, 'messages');
    expect(messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'toolResult',
      'toolResult',
      'toolResult',
      'assistant',
      'toolResult',
      'assistant',
    ]);
  });

  it('waits for an approval through worker restarts, answered over HTTP later', async () => {
    const sessionId = `approve-${Date.now()}`;
    const running = call<PromptOutcome>(sessionId, 'prompt', { prompt: 'refund it' });
    let pending: PendingApproval[] = [];
    const deadline = Date.now() + 60_000;
    // The question is in the object's state once the run reaches the call.
    while (pending.length === 0 && Date.now() < deadline) {
      pending = await call<PendingApproval[]>(sessionId, 'approvals');
      if (pending.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ toolName: 'refund', args: { id: 'r' } });
    // Every worker dies while the question waits; new ones take over.
    for (const worker of [...workers]) await killWorker(worker);
    await addWorker();
    await addWorker();
    // Answered by any process, over the ingress's awakeable API.
    const id = pending[0]?.id ?? '';
    const answered = await fetch(`${server.ingressUrl}/restate/awakeables/${id}/resolve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ approved: true }),
    });
    expect(answered.ok).toBe(true);
    const outcome = await running;
    expect(outcome).toMatchObject({
      stopReason: 'completed',
      text: `refund handled for ${sessionId}`,
    });
    expect((await logLines(sessionId)).filter((line) => line.startsWith('effect'))).toEqual([
      'effect refund r',
    ]);
    expect(await call<PendingApproval[]>(sessionId, 'approvals')).toEqual([]);
  });

  it('tells the model a refused approval, and the answer handler works like the HTTP API', async () => {
    const sessionId = `approve-deny-${Date.now()}`;
    const running = call<PromptOutcome>(sessionId, 'prompt', { prompt: 'refund it' });
    let pending: PendingApproval[] = [];
    while (pending.length === 0) {
      pending = await call<PendingApproval[]>(sessionId, 'approvals');
      if (pending.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await call(sessionId, 'answer', { id: pending[0]?.id, approved: false, reason: 'not today' });
    expect((await running).stopReason).toBe('completed');
    const messages = await call<Message[]>(sessionId, 'messages');
    const result = messages.find((message) => message.role === 'toolResult');
    expect(result).toMatchObject({ errorKind: 'denied', isError: true });
    expect(JSON.stringify(result)).toContain('not today');
    expect((await logLines(sessionId)).filter((line) => line.startsWith('effect'))).toEqual([]);
  });
});
