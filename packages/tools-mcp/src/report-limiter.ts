/**
 * Reports a server can cause without end stay few. A server may send a stream of lines that are
 * not JSON-RPC, progress for tokens it was never given, answers to requests never made or
 * notifications that break their schema; each was one `onError` report (a terminal line in the
 * CLI: 20,000 in a second), holding the whole message (megabytes, for one stray answer). Now the
 * first few of each kind are reported, then only the 10th, 100th, 1,000th… saying how many there
 * were, and each report is cut to a readable length.
 */

/** Reports of one kind passed on in full before only every tenfold one is. */
const firstReports = 3;
/** Longest report passed on, in characters. */
const maxReportChars = 1_000;
/** Kinds counted apart; past this many, new ones share one count (a server can vary the text). */
const maxKinds = 64;

/** Counts reports by kind and says which to pass on. */
export class ReportLimiter {
  readonly #counts = new Map<string, number>();

  /** The text to report for this occurrence of `message`, or `undefined` to drop it. */
  next(message: string): string | undefined {
    let kind = kindOf(message);
    if (!this.#counts.has(kind) && this.#counts.size >= maxKinds) kind = '';
    const count = (this.#counts.get(kind) ?? 0) + 1;
    this.#counts.set(kind, count);
    const text =
      message.length <= maxReportChars ? message : `${message.slice(0, maxReportChars)}…`;
    if (count <= firstReports) return text;
    if (!isPowerOfTen(count)) return undefined;
    return `${text} (${count.toLocaleString('en-US')} ${kind === '' ? 'such reports' : 'like this'} so far; only the first ${firstReports} and every tenfold are reported)`;
  }
}

/** The fixed part of a message: up to its first `: ` (what follows quotes the server's data). */
function kindOf(message: string): string {
  const end = message.indexOf(': ');
  return (end === -1 ? message : message.slice(0, end)).slice(0, 200);
}

function isPowerOfTen(count: number): boolean {
  let value = count;
  while (value >= 10 && value % 10 === 0) value /= 10;
  return value === 1;
}
