// A question asked on the terminal stays whole while other agents go on: what the transcript
// would print meanwhile (another sub-agent's result, the spinner's clearing) waits for the answer.
// Before, with two children running, the second child's question was written under the spinner
// and the first child's next line cleared it (`\r\x1b[K`): the question was gone from the screen
// and the session looked hung (CI, sub-agent-containment 'two children asking at once').
import type { AgentEvent, ToolResultMessage } from '@agent/core';
import { describe, expect, it, vi } from 'vitest';
import { Transcript } from './transcript.js';

const question =
  '\n    $ touch second\nSub-agent helper asks: Allow bash: touch second? [y] once  [a] always  [n] deny  [v] never ';

/** A line of the first child's, as the parent's transcript shows it (its bash result). */
const childResult = {
  type: 'tool-execution-update',
  toolCallId: 'h1',
  toolName: 'helper',
  partial: {
    content: [],
    details: {
      childLoopId: 'child-1',
      agentName: 'helper',
      depth: 1,
      event: {
        type: 'message-end',
        message: {
          role: 'toolResult',
          toolCallId: 'c1',
          toolName: 'bash',
          content: [{ type: 'text', text: 'Exit code: 0' }],
          isError: false,
          timestamp: 0,
        } satisfies ToolResultMessage,
      },
    },
  },
} as AgentEvent;

describe('a question on the terminal while another agent prints (spinner on)', () => {
  it('is not cleared or run into: the other lines come after its answer, in order', async () => {
    let screen = '';
    let open = false;
    const write = (text: string) => {
      screen += text;
    };
    const transcript = new Transcript({
      write,
      streamText: false,
      spinner: { paused: () => open },
      questionOpen: () => open,
    });
    // Two children run: the spinner line is drawn.
    transcript.onEvent({
      type: 'tool-execution-start',
      toolCallId: 'h1',
      toolName: 'helper',
      args: {},
    } as AgentEvent);
    await vi.waitFor(() => expect(screen).toMatch(/helper \d+\.\ds/), { timeout: 5_000 });
    // The second child asks (the approver writes to the terminal itself, not through the transcript).
    open = true;
    write(question);
    const asked = screen;
    // The first child's result arrives, then the call ends: nothing reaches the screen yet.
    transcript.onEvent(childResult);
    transcript.onEvent({
      type: 'tool-execution-end',
      toolCallId: 'h1',
      toolName: 'helper',
      result: { content: [] },
      isError: false,
    } as unknown as AgentEvent);
    expect(screen).toBe(asked);
    // Answered: the answer ends the question's line, then what waited is printed.
    write('→ once\n');
    open = false;
    await vi.waitFor(() => expect(screen).toContain('helper ✓ bash'), { timeout: 5_000 });
    const after = screen.slice(asked.length);
    expect(after.startsWith('→ once\n')).toBe(true);
    // Whatever the spinner clears is the empty line under the answer, never the question's.
    const questionLine = screen.slice(screen.lastIndexOf('\n', asked.length - 1) + 1);
    expect(questionLine.split('\n')[0]).toBe(
      'Sub-agent helper asks: Allow bash: touch second? [y] once  [a] always  [n] deny  [v] never → once',
    );
  });

  it('without a question open, lines are printed at once', () => {
    let screen = '';
    const transcript = new Transcript({
      write: (text) => {
        screen += text;
      },
      streamText: false,
      questionOpen: () => false,
    });
    transcript.onEvent(childResult);
    expect(screen).toContain('helper ✓ bash');
  });
});
