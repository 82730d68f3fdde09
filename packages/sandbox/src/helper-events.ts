import * as os from 'node:os';

/** What the exec helper reports about a command, one JSON line each. */
export type HelperEvent =
  | { type: 'started'; id: number; pid: number }
  | { type: 'failed'; id: number; message: string; code?: string }
  | {
      type: 'exit';
      id: number;
      code: number | null;
      signal: NodeJS.Signals | null;
      /** Nothing of the command is left: it is over. */
      over: boolean;
    }
  | { type: 'ended'; id: number };

/**
 * One line from the helper. Anything malformed is dropped: a command in the sandbox could write
 * to the helper's stdout, and nothing it writes may do more than confuse its own session.
 */
export function parseEvent(line: string): HelperEvent | { type: 'ready' } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    // Bytes a command wrote into the helper's output (it can take the descriptor) without a
    // newline end up before the helper's next event: that event is still read.
    const start = line.lastIndexOf('{"type":');
    if (start <= 0) return undefined;
    try {
      value = JSON.parse(line.slice(start));
    } catch {
      return undefined;
    }
  }
  if (value === null || typeof value !== 'object') return undefined;
  const event = value as Record<string, unknown>;
  if (event.type === 'ready') return { type: 'ready' };
  if (typeof event.id !== 'number') return undefined;
  const id = event.id;
  switch (event.type) {
    case 'started':
      return typeof event.pid === 'number' ? { type: 'started', id, pid: event.pid } : undefined;
    case 'failed':
      return {
        type: 'failed',
        id,
        message: typeof event.message === 'string' ? event.message : 'could not start',
        ...(typeof event.code === 'string' ? { code: event.code } : {}),
      };
    case 'exit':
      return {
        type: 'exit',
        id,
        code: typeof event.code === 'number' ? event.code : null,
        signal:
          typeof event.signal === 'string' && event.signal in os.constants.signals
            ? (event.signal as NodeJS.Signals)
            : null,
        over: event.over === true,
      };
    case 'ended':
      return { type: 'ended', id };
    default:
      return undefined;
  }
}
