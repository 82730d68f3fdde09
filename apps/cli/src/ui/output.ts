// What the CLI writes to the terminal: through the redaction (no credential value of the
// environment in the transcript or the JSON output, see redaction.ts).
import { redactText } from './redaction.js';

export const writeOut = (text: string) => process.stdout.write(redactText(text));
export const writeErr = (text: string) => process.stderr.write(redactText(text));

/** Colours on a terminal unless NO_COLOR is set (https://no-color.org). */
export function useColour(stream: NodeJS.WriteStream): boolean {
  return stream.isTTY === true && (process.env.NO_COLOR ?? '') === '';
}
