import { describe, expect, it, vi } from 'vitest';
import { heldWhileAsking } from './held-output.js';

/** A held writer onto a string, and the switch of its question. */
function terminal() {
  const state = { screen: '', open: true };
  const write = heldWhileAsking(
    (text) => {
      state.screen += text;
    },
    () => state.open,
  );
  return { state, write };
}

describe('output held while a question waits', () => {
  it('is written, in order, once the question is answered — with nothing else coming', async () => {
    const { state, write } = terminal();
    write('mcp everything [info] one\n');
    write('mcp everything [info] two\n');
    expect(state.screen).toBe('');
    state.open = false;
    await vi.waitFor(() =>
      expect(state.screen).toBe('mcp everything [info] one\nmcp everything [info] two\n'),
    );
  });

  it('before what is written after the answer', () => {
    const { state, write } = terminal();
    write('kept\n');
    state.open = false;
    write('next\n');
    expect(state.screen).toBe('kept\nnext\n');
  });
});
