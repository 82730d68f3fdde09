import type { ProviderError } from './errors.js';
import type { AssistantMessage, Message, ToolCallContent, Usage } from './messages.js';
import type { ModelInfo } from './model-pricing.js';
import type { ToolDefinition } from './tool.js';

/** How hard the model should think; providers map it to their own knobs. */
export type ThinkingLevel = 'off' | 'minimal' | 'low' | 'medium' | 'high';

/** Whether and which tools the model must call. */
export type ToolChoice = 'auto' | 'none' | 'required' | { type: 'tool'; name: string };

/** One call to a model. */
export interface ProviderRequest {
  /** Model id. */
  model: string;
  systemPrompt?: string;
  messages: readonly Message[];
  tools?: readonly ToolDefinition[];
  toolChoice?: ToolChoice;
  thinkingLevel?: ThinkingLevel;
  /** Output-token limit. */
  maxOutputTokens?: number;
  temperature?: number;
  /**
   * Tools the provider runs on its side (its own web search): the model uses them within one
   * call and the answer's text carries `citations`. A provider without such a tool ignores the
   * entry (and says so through its `onWarning`).
   */
  hostedTools?: readonly HostedTool[];
  /**
   * Deferred tools, sent only to a provider that loads them natively (`Provider.defersTools`):
   * `tools` then holds what the model sees at once (the tools not deferred, and the search
   * tool), and this every deferred tool in a stable order. The model still loads them by calling
   * the search tool; its results' `details.loaded` name what was found, which the provider turns
   * into its own form (Anthropic: `tool_reference` blocks with `defer_loading` tools; OpenAI
   * Responses: a client-executed `tool_search` whose output carries the definitions).
   */
  deferredTools?: DeferredToolDefinitions;
}

/** `ProviderRequest.deferredTools`: the search tool's name and the deferred definitions. */
export interface DeferredToolDefinitions {
  /** Name of the search tool (in `tools`) whose results load deferred tools [tool_search]. */
  searchTool: string;
  /** Every deferred tool's definition, in catalogue order (loaded or not). */
  tools: readonly ToolDefinition[];
}

/** A provider-hosted tool: today, the provider's own web search. */
export interface HostedTool {
  type: 'web_search';
  /** Searches per model call, where the provider lets it be limited. */
  maxUses?: number;
  /** Only these domains, where the provider supports it. */
  allowedDomains?: readonly string[];
  /** Never these domains, where the provider supports it. */
  blockedDomains?: readonly string[];
}

/** Options of one `stream` call. */
export interface ProviderStreamOptions {
  /** Aborting cancels the HTTP request at once; the stream then ends with an `error` event (reason `aborted`). */
  signal?: AbortSignal;
  /**
   * Called when the provider is about to continue a turn the API paused (Anthropic's
   * `pause_turn`) with another request, with the message so far; the continuation waits for it.
   * The loop's journal records it there, so a run resumed after a crash mid-continuation sends
   * that message back (the API resumes the turn) instead of paying for the whole turn again.
   */
  onCheckpoint?: (paused: AssistantMessage) => Promise<void>;
}

/**
 * The events of one model call, in order: `start`, deltas, exactly one terminal `done` or
 * `error`. `index` is the position of the block in the final message's `content`.
 */
export type StreamEvent =
  | { type: 'start'; model: string; provider: string }
  | { type: 'text-start'; index: number }
  | { type: 'text-delta'; index: number; delta: string }
  | { type: 'text-end'; index: number; text: string }
  | { type: 'thinking-start'; index: number }
  | { type: 'thinking-delta'; index: number; delta: string }
  | {
      type: 'thinking-end';
      index: number;
      thinking: string;
      signature?: string;
      redacted?: boolean;
    }
  | { type: 'tool-call-start'; index: number; id: string; name: string }
  | { type: 'tool-call-delta'; index: number; delta: string }
  | { type: 'tool-call-end'; index: number; toolCall: ToolCallContent }
  | { type: 'usage'; usage: Usage }
  | { type: 'done'; message: AssistantMessage }
  | {
      type: 'error';
      /** `aborted` when the caller's signal ended the call. */
      reason: 'error' | 'aborted';
      error: ProviderError;
      /** What had arrived before the failure, with `stopReason` `error` or `aborted`. */
      message: AssistantMessage;
    };

/**
 * An LLM behind one streaming contract. Once called, `stream` never throws: every failure
 * arrives as the terminal `error` event. Retries happen inside, before the first token.
 */
export interface Provider {
  /** Provider id, e.g. `anthropic`, `openai`, `scripted`. */
  readonly id: string;
  /**
   * Whether the provider loads deferred tools natively for `model`; requests then carry
   * `deferredTools`. Absent or false: the client-side search alone (the same behaviour).
   */
  defersTools?(model: string): boolean;
  stream(request: ProviderRequest, options?: ProviderStreamOptions): AsyncIterable<StreamEvent>;
  /**
   * What the provider knows about a model — its context window and output ceiling in tokens —
   * or undefined for a model it does not know. The agent's compaction reads the window here.
   */
  modelInfo?(model: string): ModelInfo | undefined;
}
