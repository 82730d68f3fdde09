// What a journal writes for a step's value: JSON text, whatever a tool put in its result's
// `details` (free metadata: a BigInt, a cycle, a getter that throws, nesting JSON cannot write).
// A value JSON could not hold used to fail the step, and a failed journal write ends the run.
import { errorMessage } from '../errors.js';
import type { RunStep } from '../run-journal.js';

/**
 * A value as JSON text: a BigInt as its digits, an object inside itself (a cycle) as
 * "[circular]". Throws what `JSON.stringify` throws otherwise (nesting too deep, a `toJSON` or a
 * getter that throws).
 */
export function journalJson(value: unknown): string {
  // The objects from the root to the one being written: `this` is the one a value was found in.
  const ancestors: unknown[] = [];
  const text: string | undefined = JSON.stringify(
    value,
    function safe(this: unknown, _key: string, item: unknown) {
      if (typeof item === 'bigint') return item.toString();
      if (item === null || typeof item !== 'object') return item;
      while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
      if (ancestors.includes(item)) return '[circular]';
      ancestors.push(item);
      return item;
    },
  );
  if (text === undefined) throw new Error(`${typeof value} is not a JSON value`);
  return text;
}

/**
 * The JSON text a step's value is journaled as, after `transform` (e.g. redaction). A tool result
 * JSON cannot hold (or `transform` cannot take) is kept without its `details` (never sent to the
 * model), else with a note in place of its content: the call ran, and the run goes on with what
 * can be replayed. Any other step's value is the loop's own (messages, decisions) and must be
 * JSON; one that is not throws, naming the step.
 */
export function stepJson(
  step: RunStep,
  value: unknown,
  transform: ((value: unknown) => unknown) | undefined,
): string {
  const write = (item: unknown) => journalJson(transform === undefined ? item : transform(item));
  try {
    return write(value);
  } catch (error) {
    if (step.type !== 'tool-result' || !isToolResultValue(value))
      throw new Error(
        `the ${step.type} step's value, which cannot be written as JSON: ${errorMessage(error)}`,
      );
    const { details: _details, ...message } = value.message;
    try {
      return write({ ...value, message });
    } catch (again) {
      return write({
        ...value,
        message: {
          ...message,
          content: [
            { type: 'text', text: `[The result could not be journaled: ${errorMessage(again)}]` },
          ],
        },
      });
    }
  }
}

function isToolResultValue(
  value: unknown,
): value is { message: Record<string, unknown> & { details?: unknown } } {
  if (value === null || typeof value !== 'object') return false;
  const message = (value as { message?: unknown }).message;
  return message !== null && typeof message === 'object';
}
