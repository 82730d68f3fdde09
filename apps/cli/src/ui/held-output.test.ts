import { describe, expect, it, vi } from 'vitest';
import { heldWhileAsking } from './held-output.js';

describe('output held while a question waits', () => {
  it('is written, in order, once the question is answered — with nothing else coming', async () => {
    let screen = '';
    let open = true;
    const write = heldWhileAsking(
      (text) => {
        screen += text;
      },
      () => open,
    );
    write('mcp everything [info] one\n');
    write('mcp everything [info] two\n');
    expect(screen).toBe('');
    open = false;
    await vi.waitFor(() =>
      expect(screen).toBe('mcp everything [info] one\nmcp everything [info] two\n'),
    );
  });

  it('before what is written after the answer', () => {
    let screen = '';
    let open = true;
    const write = heldWhileAsking(
      (text) => {
        screen += text;
      },
      () => open,
    );
    write('kept\n');
    open = false;
    write('next\n');
    expect(screen).toBe('kept\nnext\n');
  });
});
