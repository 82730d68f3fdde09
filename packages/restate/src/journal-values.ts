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

/** Default largest step stored, in bytes of JSON: well under Restate's 32 MiB message limit. */
export const defaultMaxStepBytes = 4 * 1024 * 1024;

/** How a journal prepares the values it stores. */
export interface JournalValues {
  /** A tool result: redacted, clipped to the limit. */
  toolResult(
    value: RunStepValues['tool-result'] | undefined,
  ): RunStepValues['tool-result'] | undefined;
  /** Any other step: redacted; over the limit it fails with an error saying so. */
  other<T>(type: string, value: T): T;
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
  const redact = <T>(value: T): T =>
    redactText === undefined ? value : (redactStrings(value, redactText) as T);
  return {
    redact,
    toolResult: (value) => {
      if (value === undefined) return value;
      const redacted = redact(value);
      const size = jsonBytes(redacted);
      if (size <= maxBytes) return redacted;
      return { ...redacted, message: clipped(redacted.message, size, maxBytes) };
    },
    other: (type, value) => {
      const redacted = redact(value);
      const size = jsonBytes(redacted);
      if (size > maxBytes)
        // Terminal: retrying cannot make it smaller.
        throw new TerminalError(
          `The ${type} step is ${size} bytes of JSON, over the ${maxBytes} a journaled step may hold (maxStepBytes)`,
        );
      return redacted;
    },
  };
}

/** A result too large for the journal, as text clipped to fit (images left out, said so). */
function clipped(message: ToolResultMessage, size: number, maxBytes: number): ToolResultMessage {
  const text = toolResultText(message.content);
  const images = message.content.filter((block) => block.type === 'image').length;
  const note = `[The result was ${size} bytes, more than the ${maxBytes} a durable run journals: clipped${images > 0 ? `, ${images} image(s) left out` : ''}.]`;
  // Characters, not bytes: JSON escapes and UTF-8 can take up to 6 bytes for one character.
  const room = Math.max(0, Math.floor(maxBytes / 6) - note.length - 200);
  return { ...message, content: [{ type: 'text', text: `${note}\n${clipText(text, room)}` }] };
}

function jsonBytes(value: unknown): number {
  return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value), 'utf8');
}

/** A copy of a JSON value with `redact` applied to every string in it, keys included. */
function redactStrings(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((item) => redactStrings(item, redact));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [redact(key), redactStrings(item, redact)]),
    );
  return value;
}

/** Whether Restate cancelled the invocation (what a cancelled invocation's awaits reject with). */
export function isCancellation(error: unknown): boolean {
  return (
    error instanceof CancelledError ||
    (error instanceof TerminalError && error.code === 409 && /cancel/i.test(error.message))
  );
}
