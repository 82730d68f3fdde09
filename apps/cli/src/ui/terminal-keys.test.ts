// The key reader of a running session, over an input stream of its own (what a TTY's stdin hands
// it): which keys answer a question and which go into the line being typed to the agent.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { pasteEnd, pasteStart, RunKeys } from './terminal-keys.js';

class Input extends EventEmitter {
  raw = false;
  setRawMode(mode: boolean) {
    this.raw = mode;
  }
  resume() {}
  pause() {}
  typeKeys(...chunks: string[]) {
    for (const chunk of chunks) this.emit('data', Buffer.from(chunk));
  }
}

function started() {
  const input = new Input();
  const keys = new RunKeys(input);
  const lines: [string, string][] = [];
  keys.start(
    () => undefined,
    (text, kind) => lines.push([text, kind]),
  );
  return { input, keys, lines };
}

describe('RunKeys while a question waits', () => {
  it('with no line being typed, the next key answers', async () => {
    const { input, keys } = started();
    const answer = keys.nextKey();
    input.typeKeys('y');
    expect(await answer).toBe('y');
  });

  it('with a line being typed, keys go on into it; Enter sends it; then a key answers', async () => {
    const { input, keys, lines } = started();
    input.typeKeys('c');
    let answered: string | undefined;
    const answer = keys.nextKey().then((key) => {
      answered = key;
      return key;
    });
    expect(keys.typing).toBe(true);
    input.typeKeys('a', 'n', ' ', 'y', 'o', 'u');
    await Promise.resolve();
    expect(answered).toBeUndefined();
    input.typeKeys('\r');
    expect(lines).toEqual([['can you', 'steer']]);
    expect(keys.typing).toBe(false);
    input.typeKeys('n');
    expect(await answer).toBe('n');
  });

  it('a paste is never an answer: it goes into the line', async () => {
    const { input, keys, lines } = started();
    let answered: string | undefined;
    const answer = keys.nextKey().then((key) => {
      answered = key;
      return key;
    });
    input.typeKeys(`${pasteStart}always yes${pasteEnd}`);
    await Promise.resolve();
    expect(answered).toBeUndefined();
    input.typeKeys('\r');
    expect(lines).toEqual([['always yes', 'steer']]);
    input.typeKeys('y');
    expect(await answer).toBe('y');
  });

  it('a form field reading text takes every key, a line being typed or not; the line stays', async () => {
    const { input, keys, lines } = started();
    input.typeKeys('half a mess');
    const field = keys.nextKey(undefined, { readsText: true });
    input.typeKeys('sk-secret');
    expect(await field).toBe('sk-secret');
    // The secret went to the field, not into the line the next Enter sends to the model.
    input.typeKeys('age\r');
    expect(lines).toEqual([['half a message', 'steer']]);
  });

  it('Ctrl-C cancels the question whatever is being typed', async () => {
    let interrupted = 0;
    const input = new Input();
    const keys = new RunKeys(input);
    keys.start(
      () => {
        interrupted++;
      },
      () => undefined,
    );
    input.typeKeys('partial');
    const answer = keys.nextKey();
    input.typeKeys('\u0003');
    expect(await answer).toBeUndefined();
    expect(interrupted).toBe(1);
  });
});

describe('RunKeys: typing that began before a question appeared', () => {
  function clocked() {
    const input = new Input();
    let time = 1_000;
    const keys = new RunKeys(input, { now: () => time });
    const lines: [string, string][] = [];
    keys.start(
      () => undefined,
      (text, kind) => lines.push([text, kind]),
    );
    return { input, keys, lines, advance: (ms: number) => (time += ms) };
  }

  it('a key right after Enter sent a line does not answer: the next message has begun', async () => {
    const { input, keys, lines, advance } = clocked();
    input.typeKeys('f', 'i', 'x', ' ', 'i', 't', '\r');
    expect(lines).toEqual([['fix it', 'steer']]);
    advance(40);
    let answered: string | undefined;
    const answer = keys.nextKey().then((key) => {
      answered = key;
      return key;
    });
    advance(60);
    // "a" of "also" would have been "always".
    input.typeKeys('a');
    advance(80);
    input.typeKeys('l', 's', 'o');
    await Promise.resolve();
    expect(answered).toBeUndefined();
    expect(keys.typing).toBe(true);
    input.typeKeys('\r');
    expect(lines).toEqual([
      ['fix it', 'steer'],
      ['also', 'steer'],
    ]);
    advance(500);
    input.typeKeys('n');
    expect(await answer).toBe('n');
  });

  it('a key after a pause answers, however recent the question', async () => {
    const { input, keys, advance } = clocked();
    input.typeKeys('x', '\r');
    advance(400);
    const answer = keys.nextKey();
    advance(10);
    input.typeKeys('y');
    expect(await answer).toBe('y');
  });

  it('keys typed after the question appeared answer at any speed (a wrong key, then the right one)', async () => {
    const { input, keys, advance } = clocked();
    const first = keys.nextKey();
    advance(1_000);
    input.typeKeys('q');
    expect(await first).toBe('q');
    const second = keys.nextKey();
    advance(50);
    input.typeKeys('y');
    expect(await second).toBe('y');
  });

  it('a form field takes every key, burst or not', async () => {
    const { input, keys, advance } = clocked();
    input.typeKeys('h', 'i', '\r');
    advance(20);
    const answer = keys.nextKey(undefined, { readsText: true });
    advance(20);
    input.typeKeys('s');
    expect(await answer).toBe('s');
  });
});

describe('RunKeys: answers in a row', () => {
  it('a question right after an answered one takes a quick key (answers are not typing)', async () => {
    const input = new Input();
    let time = 1_000;
    const keys = new RunKeys(input, { now: () => time });
    keys.start(
      () => undefined,
      () => undefined,
    );
    const first = keys.nextKey();
    time += 2_000;
    input.typeKeys('y');
    expect(await first).toBe('y');
    time += 5;
    const second = keys.nextKey();
    time += 30;
    input.typeKeys('y');
    expect(await second).toBe('y');
  });
});
