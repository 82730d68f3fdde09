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
