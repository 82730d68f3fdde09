// Output that waits for a question: while a question waits for its answer on the terminal, what
// else would be written there (another agent's lines, the spinner's clearing, a server's log) is
// kept, in order, and written once the question is answered. Written under the question, a line
// went onto the question's own line, and the spinner's `\r\x1b[K` erased it: with two sub-agents
// running, the second one's question vanished and the session looked hung.

/** How often kept output checks whether the question it waits behind was answered (ms). */
const checkMs = 50;

/**
 * A writer that passes text on to `write` unless `questionOpen()`; then the text is kept and
 * written, with whatever else was kept, once no question is open — at the next write, or within
 * {@link checkMs} when nothing else comes (the check keeps the process alive while text waits, so
 * none is lost at its end).
 */
export function heldWhileAsking(
  write: (text: string) => void,
  questionOpen: () => boolean,
): (text: string) => void {
  let held: string[] = [];
  let timer: ReturnType<typeof setInterval> | undefined;
  const release = () => {
    if (timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
    if (held.length === 0) return;
    const text = held.join('');
    held = [];
    write(text);
  };
  return (text) => {
    if (questionOpen()) {
      held.push(text);
      timer ??= setInterval(() => {
        if (!questionOpen()) release();
      }, checkMs);
      return;
    }
    release();
    write(text);
  };
}
