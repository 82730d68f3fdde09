// What the CLI writes to the terminal: through the redaction (no credential value of the
// environment in the transcript or the JSON output, see redaction.ts).
import { terminalSafe } from '@agent/core';
import { redactText } from './redaction.js';

export const writeOut = (text: string) => process.stdout.write(redactText(text));
export const writeErr = (text: string) => process.stderr.write(redactText(text));

/** Colours on a terminal unless NO_COLOR is set (https://no-color.org) or the terminal is dumb. */
export function useColour(stream: NodeJS.WriteStream): boolean {
  return canRedraw(stream) && (process.env.NO_COLOR ?? '') === '';
}

/**
 * Whether `stream` is a terminal that takes escape sequences (a spinner redrawn in place,
 * bracketed paste): not `TERM=dumb` (Emacs' shell, some CI log viewers), where each redraw was
 * a new run of `^[[K` on the screen, ten a second.
 */
export function canRedraw(stream: NodeJS.WriteStream): boolean {
  return stream.isTTY === true && process.env.TERM !== 'dumb';
}

/**
 * A notice line on stderr (a warning, what a server or a setting said): its text may hold what a
 * repository, a server or a web page wrote, so control characters are shown, not obeyed.
 */
export const writeNotice = (line: string) => writeErr(noticeText(line));

/** A notice line as {@link writeNotice} writes it. */
export const noticeText = (line: string) => `${terminalSafe(line)}\n`;
