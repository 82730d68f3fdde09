// The tool calls of a model's answer made fit to be answered and sent back: a provider stream (or
// a model behind a compatible server) may repeat an id within one answer, reuse the id of an
// earlier turn's call, or leave the id or the name empty. Answered as they came, two results
// carried one id (every provider refuses such a history, and a saved session would not load) or
// a result went to the wrong call; an empty name could never be sent back.
import type { AssistantMessage, Message, ToolCallContent } from './messages.js';

/** The name a call the model left unnamed gets: it names no tool, so its result is an error. */
export const unnamedToolCall = 'unnamed_tool_call';

/** The ids of every tool call and tool result in `messages`. */
function usedIds(messages: readonly Message[]): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    if (message.role === 'toolResult') ids.add(message.toolCallId);
    else if (message.role === 'assistant')
      for (const block of message.content) if (block.type === 'toolCall') ids.add(block.id);
  }
  return ids;
}

/** `base` with the first suffix `_2`, `_3`… not in `taken` (ids stay `[A-Za-z0-9_-]` when `base` is). */
function freshId(base: string, taken: ReadonlySet<string>): string {
  for (let suffix = 2; ; suffix++) {
    const id = `${base}_${suffix}`;
    if (!taken.has(id)) return id;
  }
}

/**
 * `message` with every tool call answerable: an id used before (in this answer or an earlier
 * message of `conversation`) or empty becomes a fresh one (`<id>_2`, or `call_<n>` for none), a
 * name that is empty or blank becomes {@link unnamedToolCall} (its result: tool not found). The
 * same message is returned when nothing needed changing; otherwise a copy (the provider's copy is
 * left alone). The ids are ours from then on: providers send them back as they are.
 */
export function answerableToolCalls(
  message: AssistantMessage,
  conversation: readonly Message[],
): AssistantMessage {
  let taken: Set<string> | undefined;
  let content: AssistantMessage['content'] | undefined;
  for (const [index, block] of message.content.entries()) {
    if (block.type !== 'toolCall') continue;
    taken ??= usedIds(conversation);
    let call: ToolCallContent = block;
    if (block.id === '' || taken.has(block.id))
      call = { ...call, id: freshId(block.id === '' ? 'call' : block.id, taken) };
    if (block.name.trim() === '') call = { ...call, name: unnamedToolCall };
    taken.add(call.id);
    if (call === block) continue;
    content ??= [...message.content];
    content[index] = call;
  }
  return content === undefined ? message : { ...message, content };
}
