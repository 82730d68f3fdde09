// What `agent --continue` shows of the conversation it resumes. A count alone ("resumed a
// conversation of 9 messages") left the user who comes back the next day asking what they were
// doing: the last prompt typed and the last answer say it, each on one line.
import type { Message } from '@agent/core';

/** Widest a quoted prompt or answer is shown (characters), cut at a word. */
const quoteWidth = 100;

/**
 * The lines for a resumed conversation: its size and when it was last written, then the last
 * prompt the user typed and the model's last answer (text only), each cut to one line. `clip`
 * cuts a text to a width at a word.
 */
export function resumedLines(
  messages: readonly Message[],
  clip: (text: string, width: number) => string,
): string[] {
  const last = messages.at(-1);
  const when = last === undefined ? '' : `, last written ${describeTime(last.timestamp)}`;
  const lines = [`resumed a conversation of ${messages.length} messages${when}`];
  const prompt = messages.findLast(
    (message) => message.role === 'user' && userText(message.content) !== '',
  );
  const answer = messages.findLast(
    (message) => message.role === 'assistant' && answerText(message.content) !== '',
  );
  if (prompt?.role === 'user') lines.push(`  you: ${clip(userText(prompt.content), quoteWidth)}`);
  if (answer?.role === 'assistant')
    lines.push(`  agent: ${clip(answerText(answer.content), quoteWidth)}`);
  return lines;
}

function userText(content: string | readonly { type: string; text?: string }[]): string {
  if (typeof content === 'string') return content.trim();
  return content
    .map((part) => (part.type === 'text' ? (part.text ?? '') : ''))
    .join(' ')
    .trim();
}

function answerText(content: readonly { type: string; text?: string }[]): string {
  // The answer's own words: thinking and tool calls are not what the user read as the answer.
  return content
    .map((part) => (part.type === 'text' ? (part.text ?? '') : ''))
    .join(' ')
    .trim();
}

/** `13:37` today, else `Nov 26 13:37` (the terminal's local time). */
function describeTime(timestamp: number): string {
  const date = new Date(timestamp);
  const time = date.toTimeString().slice(0, 5);
  if (date.toDateString() === new Date().toDateString()) return `today ${time}`;
  return `${date.toLocaleDateString('en-US', { month: 'short', day: 'numeric' })} ${time}`;
}
