// The limits of a durable session, reached on purpose against a real restate-server and a real
// worker (src/__fixtures__/limits-worker.mjs: maxStepBytes 64 KiB, maxSessionBytes 150 KiB,
// maxStateBytes 160 KiB): each refusal names the limit and how to raise it. A step over a
// journal limit ended the run with "Internal agent error: …", as if the loop had failed.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PromptOutcome } from './agent-session.js';
import {
  type RestateServer,
  startRestateServer,
  startWorker,
  type Worker,
} from './test-support/restate-server.js';

const workerScript = fileURLToPath(new URL('./__fixtures__/limits-worker.mjs', import.meta.url));

let server: RestateServer;
let worker: Worker;

beforeAll(async () => {
  server = await startRestateServer();
  worker = await startWorker(workerScript, {});
  await server.register(`http://127.0.0.1:${worker.port}`);
}, 120_000);

afterAll(async () => {
  worker?.process.kill('SIGTERM');
  await worker?.exited;
  await server?.stop();
});

async function prompt(sessionId: string, text: string): Promise<PromptOutcome> {
  const response = await fetch(`${server.ingressUrl}/agent/${sessionId}/prompt`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: text }),
  });
  const body = await response.text();
  if (!response.ok) throw new Error(`prompt of ${sessionId}: ${response.status} ${body}`);
  return JSON.parse(body) as PromptOutcome;
}

describe('a durable session at its limits', () => {
  it('a prompt over maxStepBytes: the run error names the limit and how to raise it, as it is', async () => {
    const outcome = await prompt(`step-${Date.now()}`, 'x'.repeat(80 * 1024));
    expect(outcome.stopReason).toBe('error');
    expect(outcome.error).toMatch(
      /^The run-input step is \d+ bytes of JSON, over the 65536 a journaled step may hold \(maxStepBytes\)\. Send less at once, or raise maxStepBytes .*networking\.message-size-limit/,
    );
    expect(outcome.error).not.toContain('Internal agent error');
  });

  it('a prompt past what the session may still add (maxStateBytes): named, with how to raise it', async () => {
    const sessionId = `room-${Date.now()}`;
    // 120 KiB stored (under maxSessionBytes 150 KiB): 40 KiB of room is left under 160 KiB.
    for (let round = 0; round < 2; round++)
      expect((await prompt(sessionId, `${round}`.repeat(60 * 1024))).stopReason).toBe('completed');
    const outcome = await prompt(sessionId, 'y'.repeat(50 * 1024));
    expect(outcome.stopReason).toBe('error');
    expect(outcome.error).toMatch(
      /^The run-input step is \d+ bytes of JSON, more than the \d+ this run may still add to the session: .*maxStateBytes.*raise agentSession's maxStateBytes together with the server's worker\.invoker\.per-invocation-memory-limit/,
    );
    expect(outcome.error).not.toContain('Internal agent error');
    // A smaller prompt still fits.
    expect((await prompt(sessionId, 'small')).stopReason).toBe('completed');
  });

  it('a session past maxSessionBytes: refused (413) naming the limit and how to raise it', async () => {
    const sessionId = `full-${Date.now()}`;
    // Each fits the room left; three of them (with their JSON) pass 150 KiB.
    for (let round = 0; round < 3; round++)
      expect((await prompt(sessionId, `${round}`.repeat(50 * 1024))).stopReason).toBe('completed');
    await expect(prompt(sessionId, 'more')).rejects.toThrow(
      /413.*past the 153600 it may hold \(maxSessionBytes.*raise agentSession's maxSessionBytes and maxStateBytes/,
    );
  });
});
