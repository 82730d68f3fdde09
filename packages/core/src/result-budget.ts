import {
  jsonContentAsText,
  jsonContentText,
  type ToolCallContent,
  type ToolResultMessage,
} from './messages.js';
import type { AnyAgentTool } from './tool.js';

/**
 * Clips text to `limit` characters: head ¾, tail ¼, one marker saying how much was left out.
 * A cut never falls inside a surrogate pair (an emoji): half of one is a lone surrogate, which
 * an API refuses (Anthropic: "no low surrogate in string") — in every later request too, as the
 * clipped result stays in the history.
 */
export function clipText(text: string, limit: number): string {
  if (!Number.isFinite(limit) || text.length <= limit) return text;
  const keep = Math.max(0, Math.floor(limit));
  let head = Math.floor((keep * 3) / 4);
  if (head > 0 && isHighSurrogate(text.charCodeAt(head - 1))) head--;
  let tailStart = text.length - (keep - head);
  if (tailStart < text.length && isLowSurrogate(text.charCodeAt(tailStart))) tailStart++;
  const omitted = text.length - head - (text.length - tailStart);
  return `${text.slice(0, head)}\n[… ${omitted} of ${text.length} characters clipped …]\n${text.slice(tailStart)}`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * A copy of a tool result whose text, taken together, fits in `limit` characters (images kept).
 * JSON blocks count as their text; when clipping is needed they become (clipped) text.
 */
export function clipToolResultMessage(
  message: ToolResultMessage,
  limit: number,
): ToolResultMessage {
  if (!Number.isFinite(limit)) return message;
  let total = 0;
  for (const block of message.content) {
    if (block.type === 'text') total += block.text.length;
    else if (block.type === 'json') total += jsonContentText(block).length;
  }
  if (total <= limit) return message;
  const text = jsonContentAsText(message.content)
    .map((block) => (block.type === 'text' ? block.text : ''))
    .join('\n');
  const images = message.content.filter((block) => block.type === 'image');
  return { ...message, content: [{ type: 'text', text: clipText(text, limit) }, ...images] };
}

/** Longest argument text quoted in a refetchable result's stub. */
const maxStubArgumentChars = 200;

/**
 * The history transform: what an *older* tool result (before the newest batch) becomes in the
 * copy sent to the model. The tool's `policy.history` decides first — `summarise(message)`
 * replaces the text with its summary; `refetchable` replaces it with a short stub naming the call
 * (the model can call again) — and otherwise the result budget clips it to the tool's
 * `maxResultChars` (or the agent's). Images are kept. Stored history is never changed.
 */
export function olderToolResultForModel(
  message: ToolResultMessage,
  tool: AnyAgentTool | undefined,
  defaultLimit: number,
  call: ToolCallContent | undefined,
): ToolResultMessage {
  const history = tool?.policy?.history;
  if (history?.summarise !== undefined && message.isError !== true) {
    const images = message.content.filter((block) => block.type === 'image');
    let summary: string | undefined;
    try {
      summary = history.summarise(message);
    } catch {
      summary = undefined; // A failing summary falls back to the budget below.
    }
    if (summary !== undefined)
      return { ...message, content: [{ type: 'text', text: summary }, ...images] };
  }
  if (history?.refetchable === true && message.isError !== true) {
    const args = clipText(call?.arguments ?? '', maxStubArgumentChars).replace(/\s+/g, ' ');
    const text = `[Older result of ${message.toolName}(${args}) left out to save context; call it again if you need it.]`;
    return { ...message, content: [{ type: 'text', text }] };
  }
  const limit = tool?.policy?.maxResultChars ?? defaultLimit;
  return clipToolResultMessage(message, limit);
}
