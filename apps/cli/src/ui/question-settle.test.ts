// A key pressed at the very moment a question appears, by someone who was typing just before, is
// not its answer: they were about to do something else (a `y` for another prompt, the first
// letter of a message). Such a question's answer keys are drawn once it has been on screen
// questionSettleMs; keys before are dropped and said. A question that appears while nobody types
// takes its key at once (a quick reader; a terminal a script drives), its keys drawn with it. The real key readers (RunKeys for tool, plan and MCP questions; askOnTerminal for the
// trust and MCP tool-change questions) over an input stream of their own, as a TTY's stdin hands
// them keys; a settle time far longer than the test (or zero) makes the order certain without
// timing anything.
import { EventEmitter } from 'node:events';
import type { PermissionRequest } from '@agent/core';
import { describe, expect, it, vi } from 'vitest';
import { askOnTerminal } from '../modes/trust-command.js';
import {
  questionSettleMs,
  RunKeys,
  recentTypingMs,
  terminalApprover,
  typingBurstMs,
} from './terminal-keys.js';

class Input extends EventEmitter {
  isRaw = false;
  setRawMode(mode: boolean) {
    this.isRaw = mode;
  }
  resume() {}
  pause() {}
  typeKeys(...chunks: string[]) {
    for (const chunk of chunks) this.emit('data', Buffer.from(chunk));
  }
}

const forever = 60 * 60 * 1000;

function request(): PermissionRequest {
  return {
    toolName: 'bash',
    toolCallId: 'call-1',
    args: { command: 'rm -rf build' },
    subjects: ['rm -rf build'],
    tier: 'execute',
  } as unknown as PermissionRequest;
}

/** Resolves when `text` has been written. */
function written(out: string[], text: string): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (out.join('').includes(text)) resolve();
      else setImmediate(check);
    };
    check();
  });
}

describe('RunKeys: a new question drops keys until its answer keys are drawn', () => {
  it('is a quarter of a second by default', () => {
    expect(questionSettleMs).toBeGreaterThanOrEqual(150);
  });

  it.each([
    ['y', 'once'],
    ['a', 'always'],
    ['\r', 'Enter'],
  ])(
    'the approval: %j pressed as it appears does not answer (REPL, a line handler)',
    async (key) => {
      let clock = 0;
      const input = new Input();
      const keys = new RunKeys(input, { settleMs: forever, now: () => clock });
      const lines: string[] = [];
      keys.start(
        () => undefined,
        (line) => lines.push(line),
      );
      // The user was typing: a message sent a moment before the question appeared (past a
      // typing burst, within recentTypingMs).
      input.typeKeys('run the tests', '\r');
      lines.length = 0;
      clock += typingBurstMs + 100;
      const out: string[] = [];
      let answered: unknown;
      const approval = Promise.resolve(
        terminalApprover(keys, (text) => out.push(text))(request(), {
          signal: new AbortController().signal,
        } as never),
      ).then((answer) => {
        answered = answer;
        return answer;
      });
      await written(out, 'Allow bash: rm -rf build?');
      input.typeKeys(key);
      await new Promise((resolve) => setImmediate(resolve));
      expect(answered).toBeUndefined();
      // Not typed into a line either (it was not the start of one).
      expect(keys.typing).toBe(false);
      expect(lines).toEqual([]);
      expect(out.join('')).not.toContain('[y] once');
      keys.stop();
      expect(await approval).toBe('deny');
    },
  );

  it('the approval: once its keys are drawn, a key answers; the note counts the dropped ones', async () => {
    let clock = 0;
    const input = new Input();
    const keys = new RunKeys(input, { settleMs: 0, now: () => clock });
    keys.start(
      () => undefined,
      () => undefined,
    );
    input.typeKeys('ok', '\r');
    clock += typingBurstMs + 100;
    const out: string[] = [];
    const approval = terminalApprover(keys, (text) => out.push(text))(request(), {
      signal: new AbortController().signal,
    } as never);
    input.typeKeys('a', 'a');
    await written(out, '[y] once  [a] always  [n] deny  [v] never');
    expect(out.join('')).toContain('(2 keys pressed as the question appeared did not answer it)');
    input.typeKeys('n');
    expect(await approval).toBe('deny');
  });

  it('nobody typing (the REPL idle, or -p): the keys are drawn with the question and a key answers at once', async () => {
    for (const lineHandler of [undefined, () => undefined]) {
      const input = new Input();
      const keys = new RunKeys(input, { settleMs: forever });
      keys.start(() => undefined, lineHandler);
      let ready = -1;
      const next = keys.nextKey(undefined, { onReady: (dropped) => (ready = dropped) });
      expect(ready).toBe(0);
      input.typeKeys('y');
      expect(await next).toBe('y');
      keys.stop();
    }
  });

  it('the answer keys are not drawn before a typing burst is over (a key then answers)', async () => {
    // The real clock: the question appears right after a line was sent; its keys are drawn once
    // the burst is over by that clock, so a key pressed the moment they are drawn answers.
    const input = new Input();
    const keys = new RunKeys(input, { settleMs: 0 });
    keys.start(
      () => undefined,
      () => undefined,
    );
    input.typeKeys('fix it', '\r');
    let ready = false;
    const next = keys.nextKey(undefined, { onReady: () => (ready = true) });
    await vi.waitFor(() => expect(ready).toBe(true), { timeout: 5_000, interval: 1 });
    input.typeKeys('y');
    expect(await Promise.race([next, new Promise((resolve) => setTimeout(resolve, 2_000))])).toBe(
      'y',
    );
    expect(keys.typing).toBe(false);
    keys.stop();
  });

  it('typing longer ago than recentTypingMs does not hold the keys back', async () => {
    let clock = 0;
    const input = new Input();
    const keys = new RunKeys(input, { settleMs: forever, now: () => clock });
    keys.start(
      () => undefined,
      () => undefined,
    );
    input.typeKeys('fix it', '\r');
    clock += recentTypingMs + 1;
    let ready = -1;
    const next = keys.nextKey(undefined, { onReady: (dropped) => (ready = dropped) });
    expect(ready).toBe(0);
    input.typeKeys('n');
    expect(await next).toBe('n');
    // Within recentTypingMs of typing, the same question waits.
    input.typeKeys('more', '\r');
    clock += typingBurstMs + 100;
    let waited = true;
    const held = keys.nextKey(undefined, { onReady: () => (waited = false) });
    input.typeKeys('y');
    await new Promise((resolve) => setImmediate(resolve));
    expect(waited).toBe(true);
    keys.stop();
    expect(await held).toBeUndefined();
  });

  it('Ctrl-C still cancels during the settle time; a form field (readsText) has none', async () => {
    const input = new Input();
    const keys = new RunKeys(input, { settleMs: forever });
    let interrupted = 0;
    keys.start(() => (interrupted += 1));
    const next = keys.nextKey(undefined, { onReady: () => undefined });
    input.typeKeys('\u0003');
    expect(await next).toBeUndefined();
    expect(interrupted).toBe(1);
    const field = keys.nextKey(undefined, { readsText: true, onReady: () => undefined });
    input.typeKeys('typed');
    expect(await field).toBe('typed');
  });
});

describe('askOnTerminal (the trust question): keys before its answer keys are drawn', () => {
  it.each(['y', 'Y'])('%j pressed as it appears does not trust the folder', async (key) => {
    const input = new Input();
    const out: string[] = [];
    const ask = askOnTerminal(input as unknown as NodeJS.ReadStream, (text) => out.push(text), {
      settleMs: forever,
      interruptQuits: true,
      // Keys were typed ahead while the CLI started: someone is typing.
      discardTypedAhead: () => 12,
    });
    let answered: boolean | undefined;
    const answer = ask('Trust this folder? ', '[y] yes [n] no ').then((yes) => {
      answered = yes;
      return yes;
    });
    input.typeKeys(key);
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBeUndefined();
    expect(out.join('')).not.toContain('[y] yes');
    // Ctrl-C still quits at once.
    input.typeKeys('\u0003');
    await expect(answer).rejects.toThrow('Interrupted');
  });

  it('after its keys are drawn, y trusts; the dropped key is said', async () => {
    const input = new Input();
    const out: string[] = [];
    const ask = askOnTerminal(input as unknown as NodeJS.ReadStream, (text) => out.push(text), {
      settleMs: 0,
      discardTypedAhead: () => 1,
    });
    const answer = ask('Trust this folder? ', '[y] yes [n] no ');
    input.typeKeys('y');
    await written(out, '[y] yes [n] no ');
    expect(out.join('')).toContain('(a key pressed as the question appeared did not answer it)');
    input.typeKeys('y');
    expect(await answer).toBe(true);
  });

  it.each([
    ['y', true],
    ['n', false],
  ])('nobody typing ahead: its keys are drawn with it and %j answers at once', async (key, yes) => {
    const input = new Input();
    const out: string[] = [];
    const ask = askOnTerminal(input as unknown as NodeJS.ReadStream, (text) => out.push(text), {
      settleMs: forever,
      discardTypedAhead: () => 0,
    });
    const answer = ask('Trust this folder? ', '[y] yes [n] no ');
    expect(out.join('')).toContain('[y] yes [n] no ');
    input.typeKeys(key);
    expect(await answer).toBe(yes);
  });
});
