// Text a web page chose, made fit for the model's context: control characters removed, header
// fields kept to one line, and the page's content fenced between markers the page cannot forge
// (they carry a random id per result), with a note that what is inside is data, not instructions.
// The markers are core's, shared with the OpenAPI and MCP results.
import {
  fenceUntrusted,
  untrustedNote as noteFor,
  oneLineText,
  type UntrustedFence,
  unfenceUntrusted,
  untrustedFence,
} from '@agent/core';

/** The header line that says what the markers mean. */
export const untrustedNote = noteFor('WEB', 'the web');

/** C0 controls but tab and newline, DEL, and C1 controls (8-bit CSI/OSC on some terminals). */
function isControl(code: number): boolean {
  return (code < 0x20 && code !== 0x09 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f);
}

/**
 * `text` without control characters: CR LF and a lone CR become a newline, tab and newline stay,
 * every other C0 or C1 control and DEL is dropped (an escape sequence loses its ESC and is inert).
 */
export function withoutControls(text: string): string {
  const normalised = text.replace(/\r\n?/g, '\n');
  let clean = '';
  let from = 0;
  for (let index = 0; index < normalised.length; index++) {
    if (!isControl(normalised.charCodeAt(index))) continue;
    clean += normalised.slice(from, index);
    from = index + 1;
  }
  return from === 0 ? normalised : clean + normalised.slice(from);
}

/** A header field the page chose (its title) as one printable line of at most `max` characters. */
export function oneLine(text: string, max = 300): string {
  return oneLineText(text, max);
}

/** The opening and closing markers of one result. */
export type Fence = UntrustedFence;

/** Fresh markers: the id is random, so a page cannot write the closing marker itself. */
export function newFence(): Fence {
  return untrustedFence('WEB');
}

/** `text` between the markers of `fence`, each on its own line; marker imitations inside replaced. */
export function fenced(text: string, fence: Fence = newFence()): string {
  return fenceUntrusted(text, fence);
}

/** The content inside a fenced block and its markers, or undefined when `text` is not one. */
export function unfence(text: string): { fence: Fence; inner: string } | undefined {
  return unfenceUntrusted(text);
}
