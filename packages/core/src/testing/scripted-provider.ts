import { applyStreamEvent } from '../assistant-stream.js';
import { ProviderError } from '../errors.js';
import {
  type AssistantContent,
  type AssistantMessage,
  emptyUsage,
  type OpaqueContent,
  type StopReason,
  type Usage,
} from '../messages.js';
import type { Provider, ProviderRequest, ProviderStreamOptions, StreamEvent } from '../provider.js';

/** A tool call the scripted model makes. `arguments` as raw text (sent verbatim, malformed or not) or an object (JSON-encoded). */
export interface ScriptedToolCall {
  /** Defaults to `call_<turn>_<index>`. */
  id?: string;
  name: string;
  arguments: string | Record<string, unknown>;
}

/** One assistant turn of a script. */
export interface ScriptedTurn {
  thinking?: string | { text: string; signature?: string };
  text?: string;
  toolCalls?: readonly ScriptedToolCall[];
  /** Defaults to `toolUse` when there are tool calls, else `stop`. */
  stopReason?: StopReason;
  usage?: Partial<Usage>;
  /** Ends the stream with an `error` event after `afterDeltas` deltas (default 0). */
  error?: {
    message: string;
    statusCode?: number;
    isRetryable?: boolean;
    afterDeltas?: number;
    /** Marks the error as a context overflow (the request did not fit the window). */
    contextOverflow?: boolean;
  };
  /** Wait in ms before each streamed event (overrides the provider's `delayMs`). */
  delayMs?: number;
}

/** A turn, or a function that picks the turn from the request (e.g. to echo a tool result). */
export type ScriptedStep =
  | ScriptedTurn
  | ((request: ProviderRequest, turnIndex: number) => ScriptedTurn | Promise<ScriptedTurn>);

/** Options of {@link createScriptedProvider}. */
export interface ScriptedProviderOptions {
  /** Provider id [scripted]. */
  id?: string;
  /** Characters per streamed delta [16]. */
  chunkSize?: number;
  /** Wait in ms before each streamed event [0: no timers at all]. */
  delayMs?: number;
  /** Keep a deep copy of every request in `requests` [true]. */
  recordRequests?: boolean;
  /** What to do when the script runs out: an `error` event, or replay the last step [error]. */
  whenExhausted?: 'error' | 'repeat-last';
  /** The context window `modelInfo` reports for every model [none: `modelInfo` is absent]. */
  contextWindow?: number;
}

/** A provider that replays a script of assistant turns as real streamed deltas and records every request. */
export interface ScriptedProvider extends Provider {
  /** Deep copies of the requests received, in order (when `recordRequests`). */
  readonly requests: ProviderRequest[];
  /** Number of `stream` calls so far. */
  readonly calls: number;
  /** Appends steps to the script. */
  push(...steps: ScriptedStep[]): void;
}

/**
 * A provider for tests, demos and benchmarks that needs no network: each `stream` call takes the
 * next step of the script and streams it (thinking, text, tool calls with their raw argument
 * text split into deltas, usage, `done`). Honours the abort signal between events.
 */
export function createScriptedProvider(
  steps: readonly ScriptedStep[],
  options: ScriptedProviderOptions = {},
): ScriptedProvider {
  const id = options.id ?? 'scripted';
  const chunkSize = Math.max(1, options.chunkSize ?? 16);
  const record = options.recordRequests ?? true;
  const script = [...steps];
  const requests: ProviderRequest[] = [];
  let calls = 0;

  /** The step for a turn (or the last one, when the script repeats it). */
  function stepFor(turnIndex: number): ScriptedStep | undefined {
    const step = script[turnIndex];
    if (step === undefined && options.whenExhausted === 'repeat-last')
      return script[script.length - 1];
    return step;
  }

  function stream(
    request: ProviderRequest,
    streamOptions: ProviderStreamOptions = {},
  ): AsyncIterable<StreamEvent> {
    const turnIndex = calls++;
    if (record) requests.push(structuredClone(request));
    const step = stepFor(turnIndex);
    // A plain turn without delay or error needs no async machinery: its events are ready at
    // once, as when a real provider receives a whole response in one network chunk.
    if (
      step !== undefined &&
      typeof step !== 'function' &&
      step.error === undefined &&
      (step.delayMs ?? options.delayMs ?? 0) === 0
    ) {
      const events = turnEvents(step, turnIndex, request, id, chunkSize);
      return readyStream(events, streamOptions.signal, (at) =>
        failureEvent(events, at, request, id, 'aborted', abortError(streamOptions.signal)),
      );
    }
    return pacedStream(turnIndex, step, request, streamOptions.signal);
  }

  function abortError(signal: AbortSignal | undefined): ProviderError {
    return new ProviderError('Aborted', { provider: id, cause: signal?.reason });
  }

  async function* pacedStream(
    turnIndex: number,
    step: ScriptedStep | undefined,
    request: ProviderRequest,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<StreamEvent> {
    if (step === undefined) {
      yield failureEvent(
        [],
        0,
        request,
        id,
        'error',
        new ProviderError(
          `Scripted provider has no step for turn ${turnIndex + 1} (script has ${script.length})`,
          { provider: id },
        ),
      );
      return;
    }
    let turn: ScriptedTurn;
    try {
      turn = typeof step === 'function' ? await step(request, turnIndex) : step;
    } catch (error) {
      yield failureEvent(
        [],
        0,
        request,
        id,
        'error',
        new ProviderError(`Scripted step threw: ${String(error)}`, { provider: id, cause: error }),
      );
      return;
    }
    const delayMs = turn.delayMs ?? options.delayMs ?? 0;
    const errorAfter = turn.error?.afterDeltas ?? 0;
    const events = turnEvents(turn, turnIndex, request, id, chunkSize);
    let deltas = 0;
    const scriptedError = () =>
      new ProviderError(turn.error?.message ?? 'error', {
        provider: id,
        ...(turn.error?.statusCode === undefined ? {} : { statusCode: turn.error.statusCode }),
        isRetryable: turn.error?.isRetryable ?? false,
        ...(turn.error?.contextOverflow === true ? { contextOverflow: true } : {}),
      });
    for (let at = 0; at < events.length; at++) {
      const event = events[at] as StreamEvent;
      if (at === 0 || checkedBefore(event)) {
        if (delayMs > 0 && at > 0) await sleep(delayMs, signal);
        if (signal?.aborted) {
          yield failureEvent(events, at, request, id, 'aborted', abortError(signal));
          return;
        }
        // A scripted error comes after `afterDeltas` deltas, or at the end if there are fewer.
        if (
          at > 0 &&
          turn.error !== undefined &&
          (deltas >= errorAfter || event.type === 'usage')
        ) {
          yield failureEvent(events, at, request, id, 'error', scriptedError());
          return;
        }
      }
      if (event.type.endsWith('-delta')) deltas++;
      yield event;
    }
  }

  const contextWindow = options.contextWindow;
  return {
    id,
    stream,
    ...(contextWindow === undefined
      ? {}
      : {
          modelInfo: (model: string) => ({
            id: model,
            contextWindow,
            maxOutputTokens: Math.min(8_192, contextWindow),
          }),
        }),
    requests,
    get calls() {
      return calls;
    },
    push: (...more) => {
      script.push(...more);
    },
  };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Whether the stream checks for an abort (and, paced, waits and injects a scripted error) before
 * this event: before each block starts, before each delta and before the usage; not between a
 * block's last delta and its end.
 */
function checkedBefore(event: StreamEvent): boolean {
  return (
    event.type === 'text-start' ||
    event.type === 'thinking-start' ||
    event.type === 'tool-call-start' ||
    event.type === 'text-delta' ||
    event.type === 'thinking-delta' ||
    event.type === 'tool-call-delta' ||
    event.type === 'usage'
  );
}

/** Every event of a scripted turn, in order: start, each block (start, deltas, end), usage, done. */
function turnEvents(
  turn: ScriptedTurn,
  turnIndex: number,
  request: ProviderRequest,
  provider: string,
  chunkSize: number,
): StreamEvent[] {
  const events: StreamEvent[] = [{ type: 'start', model: request.model, provider }];
  const blocks: Array<Exclude<AssistantContent, OpaqueContent>> = [];
  if (turn.thinking !== undefined) {
    const thinking = typeof turn.thinking === 'string' ? { text: turn.thinking } : turn.thinking;
    blocks.push({
      type: 'thinking',
      thinking: thinking.text,
      ...(thinking.signature === undefined ? {} : { signature: thinking.signature }),
    });
  }
  if (turn.text !== undefined) blocks.push({ type: 'text', text: turn.text });
  (turn.toolCalls ?? []).forEach((call, index) => {
    blocks.push({
      type: 'toolCall',
      id: call.id ?? `call_${turnIndex + 1}_${index}`,
      name: call.name,
      arguments:
        typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
    });
  });
  blocks.forEach((block, index) => {
    const body =
      block.type === 'text'
        ? block.text
        : block.type === 'thinking'
          ? block.thinking
          : block.arguments;
    if (block.type === 'toolCall')
      events.push({ type: 'tool-call-start', index, id: block.id, name: block.name });
    else events.push({ type: block.type === 'text' ? 'text-start' : 'thinking-start', index });
    for (let offset = 0; offset < body.length; offset += chunkSize) {
      const delta = body.slice(offset, offset + chunkSize);
      const type =
        block.type === 'toolCall'
          ? 'tool-call-delta'
          : block.type === 'text'
            ? 'text-delta'
            : 'thinking-delta';
      events.push({ type, index, delta });
    }
    if (block.type === 'toolCall') events.push({ type: 'tool-call-end', index, toolCall: block });
    else if (block.type === 'text') events.push({ type: 'text-end', index, text: block.text });
    else {
      const end: StreamEvent = { type: 'thinking-end', index, thinking: block.thinking };
      if (block.signature !== undefined) end.signature = block.signature;
      events.push(end);
    }
  });
  const usage: Usage = { ...emptyUsage(), ...turn.usage };
  if (turn.usage?.totalTokens === undefined)
    usage.totalTokens = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
  events.push({ type: 'usage', usage });
  events.push({
    type: 'done',
    message: {
      role: 'assistant',
      content: blocks,
      provider,
      model: request.model,
      usage,
      stopReason: turn.stopReason ?? ((turn.toolCalls?.length ?? 0) > 0 ? 'toolUse' : 'stop'),
      timestamp: Date.now(),
    },
  });
  return events;
}

/** The terminal event of a stream that fails before `events[at]`, carrying the partial message. */
function failureEvent(
  events: readonly StreamEvent[],
  at: number,
  request: ProviderRequest,
  provider: string,
  reason: 'error' | 'aborted',
  error: ProviderError,
): StreamEvent {
  const message: AssistantMessage = {
    role: 'assistant',
    content: [],
    provider,
    model: request.model,
    usage: emptyUsage(),
    stopReason: reason,
    timestamp: Date.now(),
  };
  for (let index = 0; index < at; index++) applyStreamEvent(message, events[index] as StreamEvent);
  message.stopReason = reason;
  message.errorMessage = error.message;
  message.content = message.content.filter((block) => block !== undefined);
  return { type: 'error', reason, error, message };
}

/** An async iterator over events that are all ready, checking the signal as a paced stream does. */
function readyStream(
  events: readonly StreamEvent[],
  signal: AbortSignal | undefined,
  aborted: (at: number) => StreamEvent,
): AsyncIterableIterator<StreamEvent> {
  let at = 0;
  let finished = false;
  const end = (): Promise<IteratorResult<StreamEvent>> => {
    finished = true;
    return Promise.resolve({ value: undefined, done: true });
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next() {
      if (finished || at >= events.length) return end();
      const event = events[at] as StreamEvent;
      if (signal?.aborted && (at === 0 || checkedBefore(event))) {
        finished = true;
        return Promise.resolve({ value: aborted(at), done: false });
      }
      at++;
      return Promise.resolve({ value: event, done: false });
    },
    return: end,
  };
}
