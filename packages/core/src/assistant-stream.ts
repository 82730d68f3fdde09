import { errorMessage, ProviderError } from './errors.js';
import { type AssistantMessage, addUsage, emptyUsage, type Message } from './messages.js';
import type { Provider, ProviderRequest, StreamEvent } from './provider.js';
import { StreamedToolCallIds } from './tool-call-ids.js';

/** Applies one stream event to a partial assistant message, in place. */
export function applyStreamEvent(message: AssistantMessage, event: StreamEvent): AssistantMessage {
  switch (event.type) {
    case 'start':
      message.model = event.model;
      message.provider = event.provider;
      return message;
    case 'text-start':
      message.content[event.index] = { type: 'text', text: '' };
      return message;
    case 'text-delta': {
      const block = message.content[event.index];
      if (block?.type === 'text') block.text += event.delta;
      else message.content[event.index] = { type: 'text', text: event.delta };
      return message;
    }
    case 'text-end':
      message.content[event.index] = { type: 'text', text: event.text };
      return message;
    case 'thinking-start':
      message.content[event.index] = { type: 'thinking', thinking: '' };
      return message;
    case 'thinking-delta': {
      const block = message.content[event.index];
      if (block?.type === 'thinking') block.thinking += event.delta;
      else message.content[event.index] = { type: 'thinking', thinking: event.delta };
      return message;
    }
    case 'thinking-end': {
      const block: AssistantMessage['content'][number] = {
        type: 'thinking',
        thinking: event.thinking,
      };
      if (event.signature !== undefined) block.signature = event.signature;
      if (event.redacted !== undefined) block.redacted = event.redacted;
      message.content[event.index] = block;
      return message;
    }
    case 'tool-call-start':
      message.content[event.index] = {
        type: 'toolCall',
        id: event.id,
        name: event.name,
        arguments: '',
      };
      return message;
    case 'tool-call-delta': {
      const block = message.content[event.index];
      if (block?.type === 'toolCall') block.arguments += event.delta;
      return message;
    }
    case 'tool-call-end':
      message.content[event.index] = event.toolCall;
      return message;
    case 'usage':
      message.usage = event.usage;
      return message;
    case 'done':
    case 'error':
      return message;
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

/** Callbacks of {@link streamAssistantMessage}. */
export interface StreamAssistantOptions {
  signal: AbortSignal;
  /** Called with the partial message before the first event. */
  onStart: (partial: AssistantMessage) => void;
  /** Called after each non-terminal event was applied to the partial message. */
  onEvent: (partial: AssistantMessage, event: StreamEvent) => void;
  /** Called with the typed error when the call fails (not when it is aborted). */
  onError?: (error: ProviderError) => void;
  /**
   * The conversation the answer continues: a call id it used already (or one repeated in the
   * answer, or empty) is renamed as the call starts, in the events and the final message alike.
   */
  conversation?: readonly Message[];
  /**
   * A paused turn this call continues (recorded before a crash): its content comes first, the
   * events' indices follow it, and the final message holds both, their usage added up.
   */
  continues?: AssistantMessage;
  /** Receives the paused turn so far (with `continues` before it) when the provider continues it. */
  onCheckpoint?: (paused: AssistantMessage) => Promise<void>;
}

/** `earlier` (a paused turn) and `later` (its continuation) as one message. */
export function continuedMessage(
  earlier: AssistantMessage,
  later: AssistantMessage,
): AssistantMessage {
  return {
    ...later,
    content: [...earlier.content, ...later.content],
    usage: addUsage(addUsage(emptyUsage(), earlier.usage), later.usage),
    timestamp: earlier.timestamp,
  };
}

/** `event` with its block index moved past the `offset` blocks of a continued turn. */
function shifted(event: StreamEvent, offset: number): StreamEvent {
  if (offset === 0 || !('index' in event)) return event;
  return { ...event, index: event.index + offset };
}

/**
 * Runs one provider call and returns the final assistant message. Never throws: a provider
 * that throws, or ends without a terminal event, yields a message with stop reason `error`
 * (or `aborted` when the signal fired).
 */
export async function streamAssistantMessage(
  provider: Provider,
  request: ProviderRequest,
  options: StreamAssistantOptions,
): Promise<AssistantMessage> {
  const partial: AssistantMessage = {
    role: 'assistant',
    content: [],
    provider: provider.id,
    model: request.model,
    usage: emptyUsage(),
    stopReason: 'stop',
    timestamp: Date.now(),
  };
  const continues = options.continues;
  if (continues !== undefined) partial.content.push(...continues.content);
  const offset = continues?.content.length ?? 0;
  const whole = (message: AssistantMessage): AssistantMessage =>
    continues === undefined ? message : continuedMessage(continues, message);
  options.onStart(partial);
  const fail = (reason: 'error' | 'aborted', message: string): AssistantMessage => ({
    ...partial,
    content: partial.content.filter((block) => block !== undefined),
    stopReason: reason,
    errorMessage: message,
  });
  const ids =
    options.conversation === undefined ? undefined : new StreamedToolCallIds(options.conversation);
  try {
    const onCheckpoint = options.onCheckpoint;
    const streamOptions = {
      signal: options.signal,
      ...(onCheckpoint === undefined
        ? {}
        : { onCheckpoint: (paused: AssistantMessage) => onCheckpoint(whole(paused)) }),
    };
    for await (const streamed of provider.stream(request, streamOptions)) {
      const moved = shifted(streamed, offset);
      const event = ids === undefined ? moved : ids.event(moved);
      if (event.type === 'done')
        return ids === undefined ? whole(event.message) : ids.message(whole(event.message));
      if (event.type === 'error') {
        const message = {
          ...(ids === undefined ? whole(event.message) : ids.message(whole(event.message))),
          stopReason: event.reason,
        } satisfies AssistantMessage;
        if (message.errorMessage === undefined) message.errorMessage = event.error.message;
        if (event.reason === 'error') options.onError?.(event.error);
        return message;
      }
      applyStreamEvent(partial, event);
      options.onEvent(partial, event);
    }
    if (options.signal.aborted) return fail('aborted', 'Aborted');
    return fail(
      'error',
      `Provider "${provider.id}" ended its stream without a done or error event`,
    );
  } catch (error) {
    if (options.signal.aborted) return fail('aborted', 'Aborted');
    const wrapped = ProviderError.isInstance(error)
      ? error
      : new ProviderError(errorMessage(error), { cause: error });
    options.onError?.(wrapped);
    return fail('error', `Provider "${provider.id}" threw: ${wrapped.message}`);
  }
}
