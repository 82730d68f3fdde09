// The tool calls of a model's answer made fit to be answered and sent back: a provider stream (or
// a model behind a compatible server) may repeat an id within one answer, reuse the id of an
// earlier turn's call, or leave the id or the name empty. Answered as they came, two results
// carried one id (every provider refuses such a history, and a saved session would not load) or
// a result went to the wrong call; an empty name could never be sent back.
import type { AssistantMessage, Message, ToolCallContent } from './messages.js';
import type { StreamEvent } from './provider.js';

/** The name a call the model left unnamed gets: it names no tool, so its result is an error. */
export const unnamedToolCall = 'unnamed_tool_call';

/** Ids taken so far: a conversation's, plus the ones given out since (kept apart from the conversation's). */
interface TakenIds {
  has(id: string): boolean;
  add(id: string): void;
}

/** The ids of a conversation seen so far, and what tells whether it only grew since. */
interface IdIndex {
  ids: Set<string>;
  count: number;
  first: Message | undefined;
  last: Message | undefined;
}

/**
 * The ids of each conversation, kept as it grows: every model call (and every assistant message of
 * a session being loaded) looked at the whole conversation again, which made a long session's
 * turns — and loading a saved one (5,000 turns: 4 s) — quadratic in its length.
 */
const idIndexes = new WeakMap<readonly Message[], IdIndex>();

function addIds(ids: Set<string>, message: Message): void {
  if (message.role === 'toolResult') ids.add(message.toolCallId);
  else if (message.role === 'assistant')
    for (const block of message.content) if (block.type === 'toolCall') ids.add(block.id);
}

/**
 * The ids of every tool call and tool result in `messages`: read from the last time when the
 * array only grew since (its first message and the last one seen are still in place), else anew.
 */
function conversationIds(messages: readonly Message[]): ReadonlySet<string> {
  let index = idIndexes.get(messages);
  const grew =
    index !== undefined &&
    index.count <= messages.length &&
    messages[0] === index.first &&
    (index.count === 0 || messages[index.count - 1] === index.last);
  if (index === undefined || !grew) {
    index = { ids: new Set(), count: 0, first: messages[0], last: undefined };
    idIndexes.set(messages, index);
  }
  for (let at = index.count; at < messages.length; at++) addIds(index.ids, messages[at] as Message);
  index.count = messages.length;
  index.first = messages[0];
  index.last = messages.at(-1);
  return index.ids;
}

/** The ids taken in `conversation`, and room for the ones given out now (which stay out of its index). */
function usedIds(conversation: readonly Message[]): TakenIds {
  const known = conversationIds(conversation);
  const added = new Set<string>();
  return {
    has: (id) => known.has(id) || added.has(id),
    add: (id) => {
      added.add(id);
    },
  };
}

/** `base` with the first suffix `_2`, `_3`… not in `taken` (ids stay `[A-Za-z0-9_-]` when `base` is). */
function freshId(base: string, taken: Pick<TakenIds, 'has'>): string {
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
  let taken: TakenIds | undefined;
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

/**
 * The same renaming applied while the answer streams, so a `tool-call-start` or `tool-call-end`
 * event already carries the id the call keeps (a UI that keyed a call by its start event's id
 * found no `tool-execution-start` for it). Ids are decided at a call's start, in stream order;
 * {@link StreamedToolCallIds.message} gives the final message the same ids.
 */
export class StreamedToolCallIds {
  readonly #conversation: readonly Message[];
  #taken: TakenIds | undefined;
  /** The id each content index streamed with (`raw`) and the one it keeps (`id`). */
  readonly #byIndex = new Map<number, { raw: string; id: string }>();

  constructor(conversation: readonly Message[]) {
    this.#conversation = conversation;
  }

  /** `event` with the call's kept id (the same object when nothing changed). */
  event(event: StreamEvent): StreamEvent {
    if (event.type === 'tool-call-start') {
      const id = this.#assign(event.index, event.id);
      return id === event.id ? event : { ...event, id };
    }
    if (event.type === 'tool-call-end') {
      const toolCall = this.#final(event.index, event.toolCall);
      return toolCall === event.toolCall ? event : { ...event, toolCall };
    }
    return event;
  }

  /** The final message with the ids its events carried, then made answerable as a whole. */
  message(message: AssistantMessage): AssistantMessage {
    let content: AssistantMessage['content'] | undefined;
    for (const [index, block] of message.content.entries()) {
      if (block.type !== 'toolCall') continue;
      const kept = this.#byIndex.get(index);
      if (kept === undefined || kept.raw !== block.id || kept.id === block.id) continue;
      content ??= [...message.content];
      content[index] = { ...block, id: kept.id };
    }
    return answerableToolCalls(
      content === undefined ? message : { ...message, content },
      this.#conversation,
    );
  }

  #assign(index: number, raw: string): string {
    this.#taken ??= usedIds(this.#conversation);
    const id =
      raw === '' || this.#taken.has(raw) ? freshId(raw === '' ? 'call' : raw, this.#taken) : raw;
    this.#taken.add(id);
    this.#byIndex.set(index, { raw, id });
    return id;
  }

  #final(index: number, call: ToolCallContent): ToolCallContent {
    const kept = this.#byIndex.get(index);
    // A call that ended without a start, or whose provider changed its id at the end.
    const id = kept !== undefined && kept.raw === call.id ? kept.id : this.#assign(index, call.id);
    let final = id === call.id ? call : { ...call, id };
    if (call.name.trim() === '') final = { ...final, name: unnamedToolCall };
    return final;
  }
}
