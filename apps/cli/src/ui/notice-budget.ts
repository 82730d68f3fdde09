// A server's notices on the terminal, bounded: a server that sends thousands of log messages,
// garbage lines or answers to nothing filled the user's terminal with a line for each.

/** Options of {@link noticeBudget}. */
export interface NoticeBudgetOptions {
  /** Lines let through at once before the budget runs dry [20]. */
  burst?: number;
  /** Lines the budget regains a second [2]. */
  perSecond?: number;
  /** What the held-back lines are called in the summary, e.g. `mcp github`. */
  source: string;
}

/**
 * Wraps `log` so that one source says at most `burst` lines at once and then `perSecond` lines a
 * second; when it runs dry that is said at once, and the lines held back are counted and said
 * in one line (`… 1,234 more line(s) from mcp github not shown`) with the next line let through
 * or a second after the first one held.
 */
export function noticeBudget(
  log: (line: string) => void,
  options: NoticeBudgetOptions,
): (line: string) => void {
  const burst = options.burst ?? 20;
  const perSecond = options.perSecond ?? 2;
  let tokens = burst;
  let last = performance.now();
  let heldBack = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const sayHeldBack = () => {
    if (heldBack === 0) return;
    log(`… ${heldBack.toLocaleString('en-US')} more line(s) from ${options.source} not shown`);
    heldBack = 0;
  };
  return (line) => {
    const now = performance.now();
    tokens = Math.min(burst, tokens + ((now - last) / 1000) * perSecond);
    last = now;
    if (tokens >= 1) {
      tokens -= 1;
      sayHeldBack();
      log(line);
      return;
    }
    heldBack += 1;
    // Said at once: the process may end before the count is.
    if (heldBack === 1)
      log(`… ${options.source} sends too many lines; the next are counted, not shown`);
    if (timer === undefined) {
      timer = setTimeout(() => {
        timer = undefined;
        sayHeldBack();
      }, 1000);
      // A summary still to come must not keep the process alive.
      timer.unref?.();
    }
  };
}
