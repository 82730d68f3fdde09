// Durable runs in a hostile environment, against a real restate-server and real worker
// processes: a run cancelled while its command runs or while a question waits, a tool result and
// a conversation larger than a Restate message, credentials in what Restate stores, an idempotent
// tool re-run after a crash, two prompts at once, and the server itself killed mid-run.
import { readFileSync, watch } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Message, ToolResultMessage } from '@agent/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PendingApproval, PromptOutcome } from './agent-session.js';
import { type H2Balancer, startH2Balancer } from './test-support/h2-balancer.js';
import {
  type RestateServer,
  startRestateServer,
  startWorker,
  type Worker,
} from './test-support/restate-server.js';

const workerScript = fileURLToPath(new URL('./__fixtures__/hostile-worker.mjs', import.meta.url));
const secret = 'sk-test-4f9a8b7c6d5e4f3a2b1c0d9e';

let server: RestateServer;
let balancer: H2Balancer;
const workers: Worker[] = [];
let log: string;

beforeAll(async () => {
  log = join(tmpdir(), `restate-hostile-${process.pid}-${Date.now()}.log`);
  await writeFile(log, '');
  server = await startRestateServer();
  balancer = await startH2Balancer();
  await addWorker();
  await server.register(balancer.url);
});

afterAll(async () => {
  for (const worker of workers.splice(0)) await killWorker(worker);
  await balancer?.close();
  await server?.stop();
  // The commands a failing test left running — only those still ours: most ended long ago, and
  // their numbers may by now be other processes' (pid_max 32768 wraps in minutes under CI; this
  // SIGKILLed whatever held them). A worker's command inherits the worker's SIDE_EFFECTS_LOG.
  for (const match of (await readFile(log, 'utf8').catch(() => '')).matchAll(/ started (\d+)$/gm))
    if (inheritsLog(Number(match[1])))
      try {
        process.kill(Number(match[1]), 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
  await rm(log, { force: true });
});

/** Whether process `pid` runs with this suite's side-effects log in its environment. */
function inheritsLog(pid: number): boolean {
  try {
    const environment = `\0${readFileSync(`/proc/${pid}/environ`, 'latin1')}`;
    return environment.includes(`\0SIDE_EFFECTS_LOG=${log}\0`);
  } catch {
    return false;
  }
}

async function addWorker(): Promise<void> {
  const worker = await startWorker(workerScript, {
    SIDE_EFFECTS_LOG: log,
    AGENT_TEST_API_KEY: secret,
    PAUSE_MS: '1500',
    INACTIVITY_MS: '500',
  });
  workers.push(worker);
  balancer.upstreams.push(worker.port);
}

async function killWorker(worker: Worker): Promise<void> {
  const at = balancer.upstreams.indexOf(worker.port);
  if (at >= 0) balancer.upstreams.splice(at, 1);
  workers.splice(workers.indexOf(worker), 1);
  worker.process.kill('SIGKILL');
  await worker.exited;
}

/** Calls a handler through the ingress; `/send` gives the invocation id at once. */
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

async function send(sessionId: string, prompt: string): Promise<string> {
  return (await call<{ invocationId: string }>(sessionId, 'prompt/send', { prompt })).invocationId;
}

/** The outcome of an invocation (waits for it to end). */
async function attach(invocationId: string): Promise<PromptOutcome> {
  const response = await fetch(`${server.ingressUrl}/restate/invocation/${invocationId}/attach`);
  const text = await response.text();
  if (!response.ok) throw new Error(`attach ${invocationId}: ${response.status} ${text}`);
  return JSON.parse(text) as PromptOutcome;
}

async function cancel(invocationId: string): Promise<void> {
  const response = await fetch(`${server.adminUrl}/invocations/${invocationId}/cancel`, {
    method: 'PATCH',
  });
  expect(response.ok, await response.text()).toBe(true);
}

/** Rows of the admin API's SQL over Restate's own tables. */
async function query(sql: string): Promise<Record<string, unknown>[]> {
  const response = await fetch(`${server.adminUrl}/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query: sql }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`query: ${response.status} ${text}`);
  return (JSON.parse(text) as { rows: Record<string, unknown>[] }).rows;
}

async function logLines(sessionId: string): Promise<string[]> {
  return (await readFile(log, 'utf8'))
    .split('\n')
    .filter((line) => line.startsWith(`${sessionId} `))
    .map((line) => line.slice(sessionId.length + 1));
}

/** Resolves with the first line of the session's log that matches, when the workers write it. */
async function logLine(sessionId: string, pattern: RegExp): Promise<RegExpExecArray> {
  const find = async () => {
    for (const line of await logLines(sessionId)) {
      const match = pattern.exec(line);
      if (match !== null) return match;
    }
    return undefined;
  };
  const watcher = watch(log);
  try {
    for (;;) {
      // Listened for before the read: a line written while the file is read must wake the next
      // wait (run104 and run108 waited out the test's 300 s for a change that came during a read).
      const changed = new Promise((resolve) => watcher.once('change', resolve));
      const found = await find();
      if (found !== undefined) return found;
      await changed;
    }
  } finally {
    watcher.close();
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function toolResults(messages: readonly Message[]): ToolResultMessage[] {
  return messages.filter((message): message is ToolResultMessage => message.role === 'toolResult');
}

describe('a durable run cancelled through Restate', () => {
  it('stops the command its tool runs, and ends as aborted with the call answered', async () => {
    const sessionId = `sleep-${Date.now()}`;
    const invocation = await send(sessionId, 'run the long command');
    const pid = Number((await logLine(sessionId, /^started (\d+)$/))[1]);
    expect(isRunning(pid)).toBe(true);
    await cancel(invocation);
    const outcome = await attach(invocation);
    expect(outcome).toMatchObject({ stopReason: 'aborted' });
    expect(outcome.error).toBeUndefined();
    // The tool saw the abort and killed its command.
    await logLine(sessionId, new RegExp(`^exited ${pid} SIGKILL$`));
    expect(isRunning(pid)).toBe(false);
    const results = toolResults(await call<Message[]>(sessionId, 'messages'));
    expect(results.map((result) => result.toolCallId)).toEqual([`call-${sessionId}`]);
    expect(results[0]).toMatchObject({ isError: true });
  });

  it('while a question waits: the call is never made, the question is gone', async () => {
    const sessionId = `ask-${Date.now()}`;
    const invocation = await send(sessionId, 'run it once approved');
    let pending: PendingApproval[] = [];
    while (pending.length === 0) {
      pending = await call<PendingApproval[]>(sessionId, 'approvals');
      // The admin API gives no event for a question being asked.
      if (pending.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await cancel(invocation);
    const outcome = await attach(invocation);
    expect(outcome.stopReason).toBe('aborted');
    expect(await call<PendingApproval[]>(sessionId, 'approvals')).toEqual([]);
    expect((await logLines(sessionId)).filter((line) => line.startsWith('started'))).toEqual([]);
  });
});

describe('sizes past what a Restate message holds (32 MiB)', () => {
  it('a 40 MB tool result is clipped into the journal: the run ends, the tool ran once', async () => {
    const sessionId = `big-40000000-${Date.now()}`;
    const outcome = await call<PromptOutcome>(sessionId, 'prompt', { prompt: 'make it big' });
    expect(outcome.stopReason).toBe('completed');
    expect(await logLines(sessionId)).toEqual(['model 0', 'effect big', 'model 1']);
    const [result] = toolResults(await call<Message[]>(sessionId, 'messages'));
    const text = JSON.stringify(result?.content);
    expect(text).toContain('more than the 4194304 a durable run journals: clipped');
    expect(text.length).toBeLessThan(4 * 1024 * 1024);
  });

  it('a 5 MB prompt: the run ends with an error naming the limit, the conversation untouched', async () => {
    const sessionId = `plain-big-prompt-${Date.now()}`;
    const outcome = await call<PromptOutcome>(sessionId, 'prompt', {
      prompt: 'x'.repeat(5_000_000),
    });
    expect(outcome.stopReason).toBe('error');
    expect(outcome.error).toMatch(
      /run-input step is \d+ bytes of JSON, over the 4194304 .*\(maxStepBytes\)/,
    );
    expect(await call<Message[]>(sessionId, 'messages')).toEqual([]);
    // The session goes on.
    expect((await call<PromptOutcome>(sessionId, 'prompt', { prompt: 'hi' })).stopReason).toBe(
      'completed',
    );
  });

  // Before: ten results of 3.5 MB in one turn (each under maxStepBytes) were all stored; the
  // session's state then passed what Restate loads into one invocation, and every later call of
  // it — even `messages { count: 1 }` — hung for ever.
  it('one prompt whose tool results add 35 MB: clipped to what the session may hold; the session stays readable', async () => {
    const sessionId = `many-10-3500000-${Date.now()}`;
    const outcome = await call<PromptOutcome>(sessionId, 'prompt', { prompt: 'go' });
    expect(outcome.stopReason).toBe('completed');
    // Every call ran once; none was run again by a retried invocation.
    expect((await logLines(sessionId)).filter((line) => line === 'effect big')).toHaveLength(10);
    const first = await call<Message[]>(sessionId, 'messages', { from: 0, count: 1 });
    expect(first).toHaveLength(1);
    const results: ToolResultMessage[] = [];
    for (let from = 0; ; from += 2) {
      const page = await call<Message[]>(sessionId, 'messages', { from, count: 2 });
      if (page.length === 0) break;
      results.push(...toolResults(page));
    }
    expect(results).toHaveLength(10);
    const clippedNote = /left of what this session may hold \(maxStateBytes\): clipped/;
    const kept = results.filter((result) => !clippedNote.test(JSON.stringify(result.content)));
    expect(kept.length).toBeGreaterThanOrEqual(7);
    expect(kept.length).toBeLessThan(10);
    const stored = JSON.stringify(results).length;
    expect(stored).toBeLessThanOrEqual(28 * 1024 * 1024);
    // Past maxSessionBytes now: the next prompt is refused clearly, not stuck.
    await expect(call(sessionId, 'prompt', { prompt: 'again' })).rejects.toThrow(
      /413.*past the 20971520 it may hold \(maxSessionBytes/,
    );
  }, 600_000);

  it('a conversation nearing what Restate loads for one invocation: refused clearly, still read in pages', async () => {
    const sessionId = `big-3000000-${Date.now()}`;
    // 3 MB a prompt: past the 20 MiB a session may hold after the seventh.
    for (let prompt = 0; prompt < 7; prompt++) {
      const outcome = await call<PromptOutcome>(sessionId, 'prompt', { prompt: `round ${prompt}` });
      expect(outcome.stopReason, `prompt ${prompt}`).toBe('completed');
    }
    // Past it, Restate would pause every invocation of the session (its state no longer fits in
    // one): a clear refusal instead, and the conversation can still be read.
    await expect(call(sessionId, 'prompt', { prompt: 'one more' })).rejects.toThrow(
      /413.*holds \d+ bytes of conversation, past the 20971520 it may hold \(maxSessionBytes/,
    );
    // All of it in one answer would pass Restate's message limit: refused, not retried for ever.
    await expect(call(sessionId, 'messages')).rejects.toThrow(/413.*ask for fewer with/);
    const messages: Message[] = [];
    for (let from = 0; ; from += 8) {
      const page = await call<Message[]>(sessionId, 'messages', { from, count: 8 });
      if (page.length === 0) break;
      messages.push(...page);
    }
    expect(messages).toHaveLength(28);
    expect(messages.filter((message) => message.role === 'user').map((m) => m.content)).toEqual(
      Array.from({ length: 7 }, (_, index) => `round ${index}`),
    );
    expect(toolResults(messages).every((result) => !result.isError)).toBe(true);
    // Seven prompts, each reloading a state that grows to 20 MiB in Restate: minutes under a
    // loaded CI (run79: past 300 s with three other suites' builds beside it).
  }, 600_000);
});

describe('a long session', () => {
  it('keeps its compactions between prompts: each span is summarised once', async () => {
    const sessionId = `compact-${Date.now()}`;
    for (let prompt = 0; prompt < 6; prompt++) {
      const outcome = await call<PromptOutcome>(sessionId, 'prompt', { prompt: `round ${prompt}` });
      expect(outcome.stopReason, `prompt ${prompt}`).toBe('completed');
    }
    // The prompts that made summary calls (a span may take several calls): each prompt's lines
    // begin with its first model call.
    const prompts = (await logLines(sessionId)).join('\n').split('model 0').slice(1);
    const summarising = prompts.filter((lines) => lines.includes('summary')).length;
    expect(summarising).toBeGreaterThan(0);
    const [stored] = await query(
      `SELECT value_utf8 FROM state WHERE service_name = 'agent' AND service_key = '${sessionId}' AND key = 'compactions'`,
    );
    const compactions = JSON.parse(String(stored?.value_utf8)) as { summary: string }[];
    // One compaction kept for each prompt that summarised: a later prompt did not summarise the
    // same span again (without them, every prompt past the window compacted from the start).
    expect(compactions).toHaveLength(summarising);
    expect(compactions.at(-1)?.summary).toBe(`SUMMARY of ${sessionId}`);
  });
});

describe('values JSON cannot hold', () => {
  it('a tool whose details hold a BigInt and a cycle: journaled as JSON can hold them, run once', async () => {
    const sessionId = `odd-${Date.now()}`;
    const outcome = await call<PromptOutcome>(sessionId, 'prompt', { prompt: 'do the odd thing' });
    expect(outcome.stopReason).toBe('completed');
    expect(await logLines(sessionId)).toEqual(['model 0', 'effect odd', 'model 1']);
    const [result] = toolResults(await call<Message[]>(sessionId, 'messages'));
    expect(result).toMatchObject({
      isError: false,
      content: [{ type: 'text', text: 'odd done' }],
      details: { big: '10', self: '[circular]' },
    });
  });
});

describe('credentials in what Restate stores', () => {
  it('a credential of the worker, in the prompt or a tool result, is stored redacted', async () => {
    const sessionId = `secret-${Date.now()}`;
    const outcome = await call<PromptOutcome>(sessionId, 'prompt', {
      prompt: `my key is ${secret}, keep it safe`,
    });
    expect(outcome.stopReason).toBe('completed');
    const messages = await call<Message[]>(sessionId, 'messages');
    expect(JSON.stringify(messages)).not.toContain(secret);
    expect(JSON.stringify(messages)).toContain('[redacted:AGENT_TEST_API_KEY]');
    const state = await query(
      `SELECT key, value_utf8 FROM state WHERE service_name = 'agent' AND service_key = '${sessionId}'`,
    );
    expect(state.length).toBeGreaterThan(0);
    expect(JSON.stringify(state)).not.toContain(secret);
    // The journal by invocation id, not joined on the session key: a join reads every journal of
    // the server, the 35 MB sessions of the tests above included (6 s alone, 140 s in a loaded CI).
    const invocations = await query(
      `SELECT id FROM sys_invocation WHERE target_service_key = '${sessionId}'`,
    );
    expect(invocations.length).toBeGreaterThan(0);
    const journal = (
      await Promise.all(
        invocations.map(({ id }) =>
          query(`SELECT index, entry_type, raw FROM sys_journal WHERE id = '${String(id)}'`),
        ),
      )
    ).flat();
    const hex = Buffer.from(secret).toString('hex');
    const holding = journal.filter((entry) => String(entry.raw).includes(hex));
    // Only the invocation's input: the prompt as the client sent it (README: "Credentials").
    expect(holding.map((entry) => entry.entry_type)).toEqual(['Command: Input']);
  });
});

describe('crashes around an idempotent tool', () => {
  it('re-runs it after its worker dies, with the same idempotency key', async () => {
    const sessionId = `repeat-${Date.now()}`;
    const invocation = await send(sessionId, 'pay 5');
    await logLine(sessionId, /^effect pay /);
    const [first] = workers;
    if (first !== undefined) await killWorker(first);
    await addWorker();
    const outcome = await attach(invocation);
    expect(outcome.stopReason).toBe('completed');
    const keys = (await logLines(sessionId)).filter((line) => line.startsWith('effect pay '));
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[0]).toMatch(new RegExp(`^effect pay [0-9a-f-]{36}:call-${sessionId}$`));
    const [result] = toolResults(await call<Message[]>(sessionId, 'messages'));
    expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'paid' }] });
  });

  it('a prompt sent again with the same idempotency key (a client that timed out) runs once', async () => {
    const sessionId = `plain-retried-${Date.now()}`;
    const send = () =>
      fetch(`${server.ingressUrl}/agent/${sessionId}/prompt`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': `${sessionId}-1` },
        body: JSON.stringify({ prompt: 'once' }),
      }).then(async (response) => JSON.parse(await response.text()) as PromptOutcome);
    const [first, second] = await Promise.all([send(), send()]);
    const third = await send();
    expect(first.stopReason).toBe('completed');
    expect(second.runId).toBe(first.runId);
    expect(third.runId).toBe(first.runId);
    expect(await logLines(sessionId)).toEqual(['model 0']);
    expect((await call<Message[]>(sessionId, 'messages')).map((m) => m.role)).toEqual([
      'user',
      'assistant',
    ]);
  });

  it('two prompts sent at once run one after the other, never interleaved', async () => {
    const sessionId = `plain-${Date.now()}`;
    const [one, two] = await Promise.all([
      call<PromptOutcome>(sessionId, 'prompt', { prompt: 'one' }),
      call<PromptOutcome>(sessionId, 'prompt', { prompt: 'two' }),
    ]);
    expect([one.stopReason, two.stopReason]).toEqual(['completed', 'completed']);
    const messages = await call<Message[]>(sessionId, 'messages');
    expect(messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(new Set(messages.filter((m) => m.role === 'user').map((m) => m.content))).toEqual(
      new Set(['one', 'two']),
    );
  });

  it('a question waiting past the inactivity timeout (the invocation suspends) is answered after', async () => {
    const sessionId = `ask-suspend-${Date.now()}`;
    const invocation = await send(sessionId, 'run it once approved');
    let status = '';
    // Restate gives no event for a suspension; its status is read until it says so.
    while (status !== 'suspended') {
      const [row] = await query(`SELECT status FROM sys_invocation WHERE id = '${invocation}'`);
      status = String(row?.status);
      if (status !== 'suspended') await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const [pending] = await call<PendingApproval[]>(sessionId, 'approvals');
    await call(sessionId, 'answer', { id: pending?.id, approved: false, reason: 'suspended no' });
    expect((await attach(invocation)).stopReason).toBe('completed');
    const [result] = toolResults(await call<Message[]>(sessionId, 'messages'));
    expect(result).toMatchObject({ isError: true, errorKind: 'denied' });
    expect(JSON.stringify(result?.content)).toContain('suspended no');
    expect((await logLines(sessionId)).filter((line) => line.startsWith('started'))).toEqual([]);
  });

  it("answer resolves only the session's own questions, not another session's", async () => {
    const sessionId = `ask-own-${Date.now()}`;
    const invocation = await send(sessionId, 'run it once approved');
    let pending: PendingApproval[] = [];
    while (pending.length === 0) {
      pending = await call<PendingApproval[]>(sessionId, 'approvals');
      // The admin API gives no event for a question being asked.
      if (pending.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const id = pending[0]?.id;
    await expect(
      call(`plain-other-${Date.now()}`, 'answer', { id, approved: true }),
    ).rejects.toThrow(/404.*No question .* waits in the session plain-other-/);
    expect(await call<PendingApproval[]>(sessionId, 'approvals')).toHaveLength(1);
    await call(sessionId, 'answer', { id, approved: false, reason: 'own session' });
    expect((await attach(invocation)).stopReason).toBe('completed');
    expect((await logLines(sessionId)).filter((line) => line.startsWith('started'))).toEqual([]);
  });

  it('a question waiting while the Restate server is killed and restarted is answered after', async () => {
    const sessionId = `ask-restart-${Date.now()}`;
    const invocation = await send(sessionId, 'run it once approved');
    let pending: PendingApproval[] = [];
    while (pending.length === 0) {
      pending = await call<PendingApproval[]>(sessionId, 'approvals');
      // The admin API gives no event for a question being asked.
      if (pending.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await server.restart();
    const answered = await fetch(
      `${server.ingressUrl}/restate/awakeables/${pending[0]?.id}/resolve`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ approved: false, reason: 'not after a restart' }),
      },
    );
    expect(answered.ok).toBe(true);
    expect((await attach(invocation)).stopReason).toBe('completed');
    const [result] = toolResults(await call<Message[]>(sessionId, 'messages'));
    expect(result).toMatchObject({ isError: true, errorKind: 'denied' });
    expect(JSON.stringify(result?.content)).toContain('not after a restart');
    expect((await logLines(sessionId)).filter((line) => line.startsWith('started'))).toEqual([]);
  });

  it('the Restate server killed while a command runs: the command dies with its attempt, and is reported interrupted', async () => {
    const sessionId = `sleep-restart-${Date.now()}`;
    const invocation = await send(sessionId, 'run the long command');
    const pid = Number((await logLine(sessionId, /^started (\d+)$/))[1]);
    await server.restart();
    // The attempt ended with the server's connection: its command was killed, not left running
    // beside the attempt that replaces it.
    await logLine(sessionId, new RegExp(`^exited ${pid} SIGKILL$`));
    expect(isRunning(pid)).toBe(false);
    const outcome = await attach(invocation);
    expect(outcome.stopReason).toBe('completed');
    const [result] = toolResults(await call<Message[]>(sessionId, 'messages'));
    expect(result).toMatchObject({ isError: true, errorKind: 'interrupted' });
    // Run once: the new attempt did not start it again.
    expect((await logLines(sessionId)).filter((line) => line.startsWith('started'))).toHaveLength(
      1,
    );
  });

  it('the Restate server killed mid-call and restarted: the run completes, the key unchanged', async () => {
    const sessionId = `repeat-restart-${Date.now()}`;
    const invocation = await send(sessionId, 'pay 5');
    await logLine(sessionId, /^effect pay /);
    await server.restart();
    const outcome = await attach(invocation);
    expect(outcome.stopReason).toBe('completed');
    const keys = (await logLines(sessionId)).filter((line) => line.startsWith('effect pay '));
    expect(new Set(keys).size).toBe(1);
    expect(toolResults(await call<Message[]>(sessionId, 'messages'))[0]?.isError).toBe(false);
  });
});
