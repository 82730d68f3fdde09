// The fault test: N agent sessions on one real restate-server and a pool of worker processes,
// workers SIGKILLed at random moments and replaced while the sessions run. Every session must
// complete; every side effect whose result the model read as done happened exactly once; every
// call cut off by a kill is reported to the model as interrupted (at most one effect, never
// repeated); a read-only call is simply done again; and no model call is made again for a
// turn whose response the journal already had (checked on the order of the synced log).
import { watch } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Message } from '@agent/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PromptOutcome } from './agent-session.js';
import { type H2Balancer, startH2Balancer } from './test-support/h2-balancer.js';
import {
  type RestateServer,
  startRestateServer,
  startWorker,
  type Worker,
} from './test-support/restate-server.js';

const workerScript = fileURLToPath(new URL('./__fixtures__/worker.mjs', import.meta.url));
const sessions = 12;
const poolSize = 3;

let server: RestateServer;
let balancer: H2Balancer;
const workers: Worker[] = [];
let log: string;

beforeAll(async () => {
  log = join(tmpdir(), `restate-fault-${process.pid}-${Date.now()}.log`);
  await writeFile(log, '');
  server = await startRestateServer();
  balancer = await startH2Balancer();
  for (let index = 0; index < poolSize; index++) await addWorker();
  await server.register(balancer.url);
});

afterAll(async () => {
  for (const worker of workers.splice(0)) await killWorker(worker);
  await balancer?.close();
  await server?.stop();
  await rm(log, { force: true });
});

async function addWorker(): Promise<void> {
  // Long enough pauses inside tools that kills land while calls run: the pool's massacre on every
  // fourth charge must land inside that charge's pause (at 50 ms a loaded CI machine's watch, read
  // and kill came after it once, and no call was interrupted).
  const worker = await startWorker(workerScript, {
    SIDE_EFFECTS_LOG: log,
    TOOL_MIN_PAUSE_MS: '400',
    TOOL_PAUSE_MS: '600',
  });
  workers.push(worker);
  balancer.upstreams.push(worker.port);
}

async function killWorker(worker: Worker): Promise<void> {
  const at = balancer.upstreams.indexOf(worker.port);
  if (at >= 0) balancer.upstreams.splice(at, 1);
  const index = workers.indexOf(worker);
  if (index >= 0) workers.splice(index, 1);
  worker.process.kill('SIGKILL');
  await worker.exited;
}

async function call<T>(sessionId: string, handler: string, body?: unknown): Promise<T> {
  const response = await fetch(`${server.ingressUrl}/agent/${sessionId}/${handler}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body ?? null),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${handler} of ${sessionId}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Which turn each call belongs to, in the workers' script. */
const turnOf: Record<string, number> = { a: 0, b: 0, c: 0, d: 1 };

describe('worker processes SIGKILLed at random points while sessions run', () => {
  it('every session completes; effects once; interrupted calls reported; no journaled model call paid twice', async () => {
    const ids = Array.from({ length: sessions }, (_, index) => `fault-${Date.now()}-${index}`);
    let done = false;
    const runs = Promise.all(
      ids.map(async (id, index) => {
        // Staggered, so kills meet sessions at every stage.
        await new Promise((resolve) => setTimeout(resolve, index * 120));
        return call<PromptOutcome>(id, 'prompt', { prompt: 'charge a, c and d' });
      }),
    ).finally(() => {
      done = true;
    });

    let kills = 0;
    // Besides the random kills below, every fourth charge kills the whole pool the moment its
    // effect is on disk: that call is cut off mid-run for sure (it pauses at least 400 ms).
    let charges = 0;
    let massacre = Promise.resolve();
    const watcher = watch(log, () => {
      massacre = massacre.then(async () => {
        const now = (await readFile(log, 'utf8'))
          .split('\n')
          .filter((line) => line.includes(' effect charge ')).length;
        if (done || Math.floor(now / 4) === Math.floor(charges / 4)) {
          charges = now;
          return;
        }
        charges = now;
        for (const worker of [...workers]) {
          await killWorker(worker);
          kills++;
        }
        for (let index = 0; index < poolSize; index++) await addWorker();
      });
    });
    // Chaos: a random worker dies every 100–500 ms and a fresh one takes its place.
    while (!done) {
      await Promise.race([
        runs,
        new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 400)),
      ]);
      if (done) break;
      const victim = workers[Math.floor(Math.random() * workers.length)];
      if (victim !== undefined) {
        await killWorker(victim);
        kills++;
      }
      await addWorker();
    }
    const outcomes = await runs;
    watcher.close();
    await massacre;
    expect(kills).toBeGreaterThan(0);

    const lines = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
    const stats = { interrupted: 0, repeatedReads: 0, repeatedModelCalls: 0 };
    for (const [index, id] of ids.entries()) {
      const outcome = outcomes[index];
      expect(outcome, id).toMatchObject({ stopReason: 'completed', text: `all charged for ${id}` });
      const messages = await call<Message[]>(id, 'messages');
      const results = messages.filter((message) => message.role === 'toolResult');
      expect(
        results.map((message) => message.toolCallId),
        id,
      ).toEqual(['a', 'b', 'c', 'd']);

      const own = lines
        .filter((line) => line.startsWith(`${id} `))
        .map((line) => line.slice(id.length + 1));
      for (const result of results) {
        const effects = own.filter((line) => line.endsWith(` ${result.toolCallId}`)).length;
        if (result.toolCallId === 'b') {
          // Read-only: repeated after a kill, never reported.
          expect(result.isError, `${id} b`).toBe(false);
          expect(effects, `${id} b`).toBeGreaterThanOrEqual(1);
          if (effects > 1) stats.repeatedReads++;
          continue;
        }
        if (result.isError) {
          expect(result.errorKind, `${id} ${result.toolCallId}`).toBe('interrupted');
          expect(effects, `${id} ${result.toolCallId}`).toBeLessThanOrEqual(1);
          stats.interrupted++;
        } else {
          expect(effects, `${id} ${result.toolCallId} done`).toBe(1);
        }
      }

      // A turn's tools start only once its model response is journaled: a model call for that
      // turn after any of them (or after the next turn's call) would be paying twice.
      for (let turn = 0; turn < 3; turn++) {
        const calls = own.flatMap((line, at) => (line === `model ${turn}` ? [at] : []));
        expect(calls.length, `${id} model ${turn}`).toBeGreaterThanOrEqual(1);
        if (calls.length > 1) stats.repeatedModelCalls++;
        const lastCall = Math.max(...calls);
        const laterWork = own.findIndex(
          (line, at) =>
            at < lastCall &&
            ((line.startsWith('effect ') && turnOf[line.split(' ')[2] ?? ''] === turn) ||
              line === `model ${turn + 1}`),
        );
        expect(laterWork, `${id}: model ${turn} called after its turn's work began`).toBe(-1);
      }
    }
    // The pool killed mid-charge cut calls off: some were reported as interrupted.
    expect(stats.interrupted).toBeGreaterThan(0);
    // What the chaos did, for the record.
    console.info(
      `fault test: ${sessions} sessions, ${kills} workers killed; ${stats.interrupted} calls reported interrupted, ${stats.repeatedReads} read-only calls repeated, ${stats.repeatedModelCalls} model turns called again before their response was journaled`,
    );
  });
});
