// What a run step hands Restate to store: redacted (credential values of the worker's
// environment), and small enough for a Restate message — a tool result larger than that is
// clipped, since Restate refuses the message and retries the invocation for ever otherwise.
import {
  clipText,
  credentialRedactor,
  type RunStepValues,
  type ToolResultMessage,
  toolResultText,
} from '@agent/core';
import { CancelledError, TerminalError } from '@restatedev/restate-sdk';

/** The error code of a step refused for its size: the journal turns it into a `RunLimitError`. */
export const limitErrorCode = 413;

/** Default largest step stored, in bytes of JSON: well under Restate's 32 MiB message limit. */
export const defaultMaxStepBytes = 4 * 1024 * 1024;

/** How a journal prepares the values it stores. */
export interface JournalValues {
  /**
   * A tool result: redacted, clipped to the limit — `maxStepBytes`, or `roomBytes` when less (what
   * the run may still add to the session's state).
   */
  toolResult(
    value: RunStepValues['tool-result'] | undefined,
    roomBytes?: number,
  ): RunStepValues['tool-result'] | undefined;
  /**
   * Any other step: redacted; over the limit (or over `room`, what the run may still add to the
   * session, with the reason) it fails with an error saying so.
   */
  other<T>(type: string, value: T, room?: { bytes: number; why: string }): T;
  /** Bytes of JSON a value takes as stored. */
  bytes(value: unknown): number;
  /** Every string of a JSON value redacted (state written outside steps: the conversation). */
  redact<T>(value: T): T;
}

/** The value preparation of a journal with these options. */
export function journalValues(options: {
  redact?: ((text: string) => string) | false;
  maxStepBytes?: number;
}): JournalValues {
  const redactText =
    options.redact === false ? undefined : (options.redact ?? credentialRedactor(process.env));
  const maxBytes = options.maxStepBytes ?? defaultMaxStepBytes;
  if (!(Number.isFinite(maxBytes) && maxBytes >= 1024))
    throw new RangeError(`maxStepBytes must be a number of bytes >= 1024, got ${String(maxBytes)}`);
  /** The value as Restate will store it: JSON text, redacted; what JSON cannot hold made so. */
  const stored = (value: unknown): { text: string; bytes: number } => {
    const plain = jsonText(value);
    const text = redactText === undefined ? plain : redactText(plain);
    return { text, bytes: Buffer.byteLength(text, 'utf8') };
  };
  const parsed = <T>(text: string): T => {
    try {
      return JSON.parse(text) as T;
    } catch (error) {
      throw new TerminalError(
        `redact turned a step's JSON into text that is not JSON (${error instanceof Error ? error.message : String(error)}): it must replace values with plain text`,
      );
    }
  };
  const redact = <T>(value: T): T => (value === undefined ? value : parsed<T>(stored(value).text));
  return {
    redact,
    bytes: (value) => {
      if (value === undefined) return 0;
      try {
        return Buffer.byteLength(jsonText(value), 'utf8');
      } catch {
        // Only a value no step stores (nested too deep): nothing of it was stored.
        return 0;
      }
    },
    toolResult: (value, roomBytes) => {
      if (value === undefined) return value;
      const { text, bytes } = storedResult(value, stored);
      const safe = parsed<RunStepValues['tool-result']>(text);
      const limit = Math.min(maxBytes, roomBytes ?? maxBytes);
      if (bytes <= limit) return safe;
      return {
        ...safe,
        message: clipped(safe.message, bytes, limit, limit < maxBytes ? 'session' : 'step'),
      };
    },
    other: (type, value, room) => {
      if (value === undefined) return value;
      let text: string;
      let bytes: number;
      try {
        ({ text, bytes } = stored(value));
      } catch (error) {
        throw new TerminalError(
          `The ${type} step cannot be journaled: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      if (bytes > maxBytes)
        // Terminal: retrying cannot make it smaller. 413: the journal reports it as the run's
        // limit (RunLimitError), not as a failure of the loop.
        throw new TerminalError(
          `The ${type} step is ${bytes} bytes of JSON, over the ${maxBytes} a journaled step may hold (maxStepBytes). Send less at once, or raise maxStepBytes (agentSession's or RestateRunJournal's option) — up to Restate's message size limit, networking.message-size-limit (32 MiB by default)`,
          { errorCode: limitErrorCode },
        );
      if (room !== undefined && bytes > room.bytes)
        throw new TerminalError(
          `The ${type} step is ${bytes} bytes of JSON, more than the ${Math.max(0, room.bytes)} this run may still add to the session: ${room.why}`,
          { errorCode: limitErrorCode },
        );
      return parsed(text);
    },
  };
}

/**
 * A value as JSON text: a BigInt as its digits, an object inside itself (a cycle) as
 * "[circular]". Throws for a value nested too deep for `JSON.stringify`. A tool's `details` may
 * hold anything, and a step whose value JSON could not hold failed — Restate then ran the tool
 * again and again.
 */
function jsonText(value: unknown): string {
  // The objects from the root to the one being written: `this` is the one a value was found in.
  const ancestors: unknown[] = [];
  return JSON.stringify(value, function safe(this: unknown, _key: string, item: unknown) {
    if (typeof item === 'bigint') return item.toString();
    if (item === null || typeof item !== 'object') return item;
    while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
    if (ancestors.includes(item)) return '[circular]';
    ancestors.push(item);
    return item;
  });
}

/**
 * A tool result as stored: whole; without its `details` (never sent to the model) when JSON cannot
 * hold them (nested too deep); else a note in place of its content.
 */
function storedResult(
  value: RunStepValues['tool-result'],
  stored: (value: unknown) => { text: string; bytes: number },
): { text: string; bytes: number } {
  try {
    return stored(value);
  } catch {
    const { details: _details, ...message } = value.message;
    try {
      return stored({ ...value, message });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return stored({
        ...value,
        message: {
          ...message,
          content: [{ type: 'text', text: `[The result could not be journaled: ${why}]` }],
        },
      });
    }
  }
}

/**
 * A result too large for the journal, as text clipped to fit (images left out, said so): over
 * what one step may hold, or over what is left of what the session may hold.
 */
function clipped(
  message: ToolResultMessage,
  size: number,
  maxBytes: number,
  over: 'step' | 'session',
): ToolResultMessage {
  const text = toolResultText(message.content);
  const images = message.content.filter((block) => block.type === 'image').length;
  const limit =
    over === 'step'
      ? `more than the ${maxBytes} a durable run journals`
      : `more than the ${maxBytes} left of what this session may hold (maxStateBytes)`;
  const note = `[The result was ${size} bytes, ${limit}: clipped${images > 0 ? `, ${images} image(s) left out` : ''}.]`;
  // Characters, not bytes: JSON escapes and UTF-8 can take up to 6 bytes for one character.
  const room = Math.max(0, Math.floor(maxBytes / 6) - note.length - 200);
  return { ...message, content: [{ type: 'text', text: `${note}\n${clipText(text, room)}` }] };
}

/** Whether Restate cancelled the invocation (what a cancelled invocation's awaits reject with). */
export function isCancellation(error: unknown): boolean {
  return (
    error instanceof CancelledError ||
    (error instanceof TerminalError && error.code === 409 && /cancel/i.test(error.message))
  );
}
