import type { ToolResultMessage } from './messages.js';

/** Clips text to `limit` characters: head ¾, tail ¼, one marker saying how much was left out. */
export function clipText(text: string, limit: number): string {
  if (!Number.isFinite(limit) || text.length <= limit) return text;
  const keep = Math.max(0, Math.floor(limit));
  const head = Math.floor((keep * 3) / 4);
  const tail = keep - head;
  const omitted = text.length - keep;
  return `${text.slice(0, head)}\n[… ${omitted} of ${text.length} characters clipped …]\n${tail > 0 ? text.slice(text.length - tail) : ''}`;
}

/** A copy of a tool result whose text, taken together, fits in `limit` characters (images kept). */
export function clipToolResultMessage(
  message: ToolResultMessage,
  limit: number,
): ToolResultMessage {
  if (!Number.isFinite(limit)) return message;
  let total = 0;
  for (const block of message.content) if (block.type === 'text') total += block.text.length;
  if (total <= limit) return message;
  const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
  const images = message.content.filter((block) => block.type === 'image');
  return { ...message, content: [{ type: 'text', text: clipText(text, limit) }, ...images] };
}
