import { ProviderError } from '../errors.js';
import {
  type AssistantContent,
  type AssistantMessage,
  emptyUsage,
  type StopReason,
  type ToolCallContent,
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
  error?: { message: string; statusCode?: number; isRetryable?: boolean; afterDeltas?: number };
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

  async function* stream(
    request: ProviderRequest,
    streamOptions: ProviderStreamOptions = {},
  ): AsyncGenerator<StreamEvent> {
    const turnIndex = calls++;
    if (record) requests.push(structuredClone(request));
    const signal = streamOptions.signal;
    const message: AssistantMessage = {
      role: 'assistant',
      content: [],
      provider: id,
      model: request.model,
      usage: emptyUsage(),
      stopReason: 'stop',
      timestamp: Date.now(),
    };
    const fail = (reason: 'error' | 'aborted', error: ProviderError): StreamEvent => ({
      type: 'error',
      reason,
      error,
      message: {
        ...message,
        content: [...message.content],
        stopReason: reason,
        errorMessage: error.message,
      },
    });
    const abortedEvent = () =>
      fail('aborted', new ProviderError('Aborted', { provider: id, cause: signal?.reason }));

    let step = script[turnIndex];
    if (step === undefined && options.whenExhausted === 'repeat-last')
      step = script[script.length - 1];
    if (step === undefined) {
      yield fail(
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
      yield fail(
        'error',
        new ProviderError(`Scripted step threw: ${String(error)}`, { provider: id, cause: error }),
      );
      return;
    }
    const delayMs = turn.delayMs ?? options.delayMs ?? 0;
    let deltas = 0;
    const errorAfter = turn.error?.afterDeltas ?? 0;

    // Yields one event after the optional delay; returns false when the stream must stop.
    const check = (): 'go' | 'aborted' | 'error' => {
      if (signal?.aborted) return 'aborted';
      if (turn.error !== undefined && deltas >= errorAfter) return 'error';
      return 'go';
    };
    // Without a delay there is no await at all between events (the benchmarks measure the loop, not timers).
    const pace = async (): Promise<'go' | 'aborted' | 'error'> => {
      await sleep(delayMs, signal);
      return check();
    };
    const scriptedError = () =>
      fail(
        'error',
        new ProviderError(turn.error?.message ?? 'error', {
          provider: id,
          ...(turn.error?.statusCode === undefined ? {} : { statusCode: turn.error.statusCode }),
          isRetryable: turn.error?.isRetryable ?? false,
        }),
      );

    if (signal?.aborted) {
      yield abortedEvent();
      return;
    }
    yield { type: 'start', model: request.model, provider: id };

    const blocks: AssistantContent[] = [];
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

    for (const [index, block] of blocks.entries()) {
      let state = delayMs > 0 ? await pace() : check();
      if (state !== 'go') {
        yield state === 'aborted' ? abortedEvent() : scriptedError();
        return;
      }
      const body =
        block.type === 'text'
          ? block.text
          : block.type === 'thinking'
            ? block.thinking
            : block.arguments;
      if (block.type === 'toolCall') {
        yield { type: 'tool-call-start', index, id: block.id, name: block.name };
        message.content[index] = { ...block, arguments: '' };
      } else if (block.type === 'text') {
        yield { type: 'text-start', index };
        message.content[index] = { type: 'text', text: '' };
      } else {
        yield { type: 'thinking-start', index };
        message.content[index] = { type: 'thinking', thinking: '' };
      }
      for (let offset = 0; offset < body.length; offset += chunkSize) {
        state = delayMs > 0 ? await pace() : check();
        if (state !== 'go') {
          yield state === 'aborted' ? abortedEvent() : scriptedError();
          return;
        }
        const delta = body.slice(offset, offset + chunkSize);
        deltas++;
        const current = message.content[index] as AssistantContent;
        if (current.type === 'toolCall') {
          current.arguments += delta;
          yield { type: 'tool-call-delta', index, delta };
        } else if (current.type === 'text') {
          current.text += delta;
          yield { type: 'text-delta', index, delta };
        } else {
          current.thinking += delta;
          yield { type: 'thinking-delta', index, delta };
        }
      }
      message.content[index] = block;
      if (block.type === 'toolCall')
        yield { type: 'tool-call-end', index, toolCall: block as ToolCallContent };
      else if (block.type === 'text') yield { type: 'text-end', index, text: block.text };
      else {
        const end: StreamEvent = { type: 'thinking-end', index, thinking: block.thinking };
        if (block.signature !== undefined) end.signature = block.signature;
        yield end;
      }
    }
    const state = delayMs > 0 ? await pace() : check();
    if (state !== 'go' || turn.error !== undefined) {
      yield state === 'aborted' ? abortedEvent() : scriptedError();
      return;
    }
    const usage: Usage = { ...emptyUsage(), ...turn.usage };
    if (turn.usage?.totalTokens === undefined)
      usage.totalTokens = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
    message.usage = usage;
    yield { type: 'usage', usage };
    message.stopReason =
      turn.stopReason ?? ((turn.toolCalls?.length ?? 0) > 0 ? 'toolUse' : 'stop');
    yield { type: 'done', message };
  }

  return {
    id,
    stream,
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
