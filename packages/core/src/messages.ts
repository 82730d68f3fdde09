import type { ToolErrorKind } from './errors.js';

/** Plain text. */
export interface TextContent {
  type: 'text';
  text: string;
  /** Sources a provider's own web search cited for this text (see `ProviderRequest.hostedTools`). */
  citations?: Citation[];
}

/** A web source behind a piece of text, as the provider's server-side search reported it. */
export interface Citation {
  url: string;
  title?: string;
  /** The passage of the source the text relies on, when the provider gives it. */
  citedText?: string;
}

/** An image, base64-encoded. */
export interface ImageContent {
  type: 'image';
  /** Base64 data without a `data:` prefix. */
  data: string;
  /** e.g. `image/png`. */
  mimeType: string;
}

/**
 * Structured data a tool returns (Kiro's JSON output item): any JSON value. Providers whose tool
 * results take JSON get it as such (Gemini's function response); the others get it as text
 * ({@link jsonContentText}).
 */
export interface JsonContent {
  type: 'json';
  /** A JSON value (what `JSON.stringify` can write). */
  value: unknown;
}

/** Model reasoning. `signature` (Anthropic) must be sent back unchanged on the next turn. */
export interface ThinkingContent {
  type: 'thinking';
  thinking: string;
  /** Opaque provider signature or encrypted payload that makes the block replayable. */
  signature?: string;
  /** True when the provider returned the reasoning redacted (only `signature` is meaningful). */
  redacted?: boolean;
}

/** A tool call requested by the model. */
export interface ToolCallContent {
  type: 'toolCall';
  /** Provider-assigned id; tool results refer to it. */
  id: string;
  /** Wire name the model used (may be an alias). */
  name: string;
  /**
   * The arguments as JSON text, possibly malformed, exactly as the model produced them after the
   * provider's dialect mapping (e.g. OpenAI strict-mode nulls for absent fields removed; the
   * verbatim text then lives in `providerMetadata` for replay).
   */
  arguments: string;
  /** Opaque provider data that must be replayed with the call (e.g. Gemini thought signatures). */
  providerMetadata?: Record<string, unknown>;
}

/**
 * A block only the provider that produced it understands, kept as that provider sent it (e.g.
 * Anthropic's `server_tool_use` and `web_search_tool_result`: a search its servers ran
 * mid-turn). The same provider gets it back unchanged, in its place, on the next request (its
 * API needs it to continue a paused turn); every other provider leaves it out.
 */
export interface OpaqueContent {
  type: 'opaque';
  /** Id of the provider that produced it (the message's `provider`). */
  provider: string;
  /** The block as the provider sent it (JSON). */
  data: Record<string, unknown>;
}

/** Content a user message or tool result can carry. */
export type UserContent = TextContent | ImageContent;
/** Content of a tool result. */
export type ToolResultContent = TextContent | ImageContent | JsonContent;
/** Content of an assistant message. */
export type AssistantContent = TextContent | ThinkingContent | ToolCallContent | OpaqueContent;

/** Token counts for one provider call; `cost` in US dollars when the model's prices are known. */
export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost?: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

/** Why the model stopped: `toolUse` when it asked for tools, `length` at the output-token limit. */
export type StopReason = 'stop' | 'length' | 'toolUse' | 'error' | 'aborted';

/** A message from the user. */
export interface UserMessage {
  role: 'user';
  content: string | UserContent[];
  /** Milliseconds since the epoch. */
  timestamp: number;
}

/** A message from the model. */
export interface AssistantMessage {
  role: 'assistant';
  content: AssistantContent[];
  /** Provider id, e.g. `anthropic`. */
  provider: string;
  /** Model id. */
  model: string;
  usage: Usage;
  stopReason: StopReason;
  /** Set when `stopReason` is `error` or `aborted`. */
  errorMessage?: string;
  /** Milliseconds since the epoch. */
  timestamp: number;
}

/** The result of one tool call, as the model sees it. */
export interface ToolResultMessage<TDetails = unknown> {
  role: 'toolResult';
  toolCallId: string;
  toolName: string;
  content: ToolResultContent[];
  /** Free metadata for UIs and logs; never sent to the model. */
  details?: TDetails;
  /** Set by sub-agent tools: the id of the child loop that produced this result. */
  childLoopId?: string;
  isError: boolean;
  /** Why the call failed, when `isError` (e.g. `invalid-args`, `timeout`, `denied`). */
  errorKind?: ToolErrorKind;
  /** Milliseconds since the epoch. */
  timestamp: number;
}

/** Any message of a conversation. A conversation is plain JSON: save it, load it, continue it. */
export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/** A usage record with every count zero. */
export function emptyUsage(): Usage {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
}

/** Adds `usage` (tokens and, when known, cost) into `total`, in place; returns `total`. */
export function addUsage(total: Usage, usage: Usage): Usage {
  total.input += usage.input;
  total.output += usage.output;
  total.cacheRead += usage.cacheRead;
  total.cacheWrite += usage.cacheWrite;
  total.totalTokens += usage.totalTokens;
  if (usage.cost !== undefined) {
    total.cost ??= { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
    total.cost.input += usage.cost.input;
    total.cost.output += usage.cost.output;
    total.cost.cacheRead += usage.cost.cacheRead;
    total.cost.cacheWrite += usage.cost.cacheWrite;
    total.cost.total += usage.cost.total;
  }
  return total;
}

/** Builds a user message from text or content. */
export function userMessage(content: string | UserContent[], timestamp = Date.now()): UserMessage {
  return { role: 'user', content, timestamp };
}

/** Builds a text content block. */
export function textContent(text: string): TextContent {
  return { type: 'text', text };
}

/** The concatenated text blocks of a message, JSON blocks as text (thinking and tool calls excluded). */
export function messageText(message: Message): string {
  if (typeof message.content === 'string') return message.content;
  let text = '';
  for (const block of message.content) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'json') text += jsonContentText(block);
  }
  return text;
}

/**
 * The text a JSON block becomes where only text is taken: the value as JSON, indented by two
 * spaces (`null` for a value JSON cannot write, such as `undefined`; a value that cannot be
 * serialised at all, such as a BigInt or a cycle, is described instead of failing).
 */
export function jsonContentText(block: JsonContent): string {
  try {
    return JSON.stringify(block.value, null, 2) ?? 'null';
  } catch (error) {
    return `[JSON value that cannot be written: ${error instanceof Error ? error.message : String(error)}]`;
  }
}

/** A tool result's content with each JSON block turned into text, for a provider without JSON results. */
export function jsonContentAsText(
  content: readonly ToolResultContent[],
): (TextContent | ImageContent)[] {
  return content.map((block) =>
    block.type === 'json' ? { type: 'text', text: jsonContentText(block) } : block,
  );
}

/**
 * A tool result's content as one string: text blocks as they are, JSON as text, an image as
 * `[image <mimeType>]`, joined by newlines (for logs, tests and embedders that want a string).
 */
export function toolResultText(content: readonly ToolResultContent[]): string {
  return content
    .map((block) => {
      switch (block.type) {
        case 'text':
          return block.text;
        case 'json':
          return jsonContentText(block);
        case 'image':
          return `[image ${block.mimeType}]`;
        default: {
          const _exhaustive: never = block;
          return String(_exhaustive);
        }
      }
    })
    .join('\n');
}

/** The tool calls of an assistant message, in order. */
export function toolCallsOf(message: AssistantMessage): ToolCallContent[] {
  return message.content.filter((block): block is ToolCallContent => block.type === 'toolCall');
}
