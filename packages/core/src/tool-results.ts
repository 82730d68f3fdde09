import type { ToolErrorKind } from './errors.js';
import type { ToolCallContent, ToolResultMessage } from './messages.js';
import type { AnyAgentTool, ToolResult } from './tool.js';
import type { ToolLookup } from './tool-catalogue.js';

// How the loop turns what happened to a call into its one `toolResult` message: normalising a
// tool's return value, error results with their kind, and the synthetic results of calls that
// never ran.

/** Longest raw-argument excerpt quoted back to the model. */
const maxQuotedArgumentChars = 1024;

/** One call's final message, and whether it voted to end the run. */
export interface Settled {
  message: ToolResultMessage;
  terminate: boolean;
}

/** `result` with a sentence appended to its text. */
export function withNote(result: ToolResult, note: string): ToolResult {
  const noted: ToolResult = {
    ...result,
    content: [...result.content, { type: 'text', text: note }],
  };
  const kind = errorKinds.get(result);
  if (kind !== undefined) errorKinds.set(noted, kind);
  return noted;
}

/** A tool's return value as a `ToolResult`; anything else becomes a `failed` error result. */
export function normaliseResult(value: unknown): ToolResult {
  if (value !== null && typeof value === 'object' && Array.isArray((value as ToolResult).content)) {
    return value as ToolResult;
  }
  return errorResult(
    `Tool returned an invalid result (expected { content: [...] }, got ${typeof value})`,
    'failed',
  );
}

const errorKinds = new WeakMap<ToolResult, ToolErrorKind>();

export function errorResult(text: string, kind: ToolErrorKind): ToolResult {
  const result: ToolResult = { content: [{ type: 'text', text }], isError: true };
  errorKinds.set(result, kind);
  return result;
}

export function toResultMessage(
  call: ToolCallContent,
  tool: AnyAgentTool,
  result: ToolResult,
): ToolResultMessage {
  const message: ToolResultMessage = {
    role: 'toolResult',
    toolCallId: call.id,
    toolName: tool.name,
    content: wellFormed(result.content),
    isError: result.isError === true,
    timestamp: Date.now(),
  };
  if (result.details !== undefined) message.details = result.details;
  if (result.childLoopId !== undefined) message.childLoopId = result.childLoopId;
  const kind = errorKinds.get(result);
  if (kind !== undefined) message.errorKind = kind;
  else if (result.isError === true) message.errorKind = 'failed';
  return message;
}

/** `String.prototype.isWellFormed`/`toWellFormed` (ES2024; the lib here is ES2023). */
interface WellFormedString {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/**
 * The content with every lone surrogate in its text replaced by U+FFFD. A tool's output may hold
 * one (a REPL printing `'\ud800'`, text cut inside an emoji): an API refuses the request that
 * carries it ("no low surrogate in string"), and every later one, the result being in the history.
 */
function wellFormed(content: ToolResult['content']): ToolResult['content'] {
  let changed = false;
  const blocks = content.map((block) => {
    if (block.type === 'text') {
      const text = wellFormedValue(block.text);
      if (text === block.text) return block;
      changed = true;
      return { ...block, text: text as string };
    }
    if (block.type === 'json') {
      // A JSON string holding one is sent as a `\ud800` escape, refused alike. Nesting too
      // deep to walk is left as it is (no JSON text can be made of it either).
      let value: unknown;
      try {
        value = wellFormedValue(block.value);
      } catch {
        return block;
      }
      if (value === block.value) return block;
      changed = true;
      return { ...block, value };
    }
    return block;
  });
  return changed ? blocks : content;
}

/** `value` with lone surrogates in its strings replaced; the same value when it has none. */
function wellFormedValue(value: unknown): unknown {
  if (typeof value === 'string') {
    const text = value as unknown as WellFormedString;
    return text.isWellFormed() ? value : text.toWellFormed();
  }
  if (Array.isArray(value)) {
    let changed = false;
    const items = value.map((item) => {
      const fixed = wellFormedValue(item);
      if (fixed !== item) changed = true;
      return fixed;
    });
    return changed ? items : value;
  }
  if (value !== null && typeof value === 'object') {
    let changed = false;
    const entries = Object.entries(value).map(([key, item]) => {
      const fixedKey = wellFormedValue(key) as string;
      const fixed = wellFormedValue(item);
      if (fixed !== item || fixedKey !== key) changed = true;
      return [fixedKey, fixed] as const;
    });
    return changed ? Object.fromEntries(entries) : value;
  }
  return value;
}

export function synthetic(
  call: ToolCallContent,
  tool: AnyAgentTool | undefined,
  text: string,
  kind: ToolErrorKind,
): Settled {
  return {
    message: {
      role: 'toolResult',
      toolCallId: call.id,
      toolName: tool?.name ?? call.name,
      content: [{ type: 'text', text }],
      isError: true,
      errorKind: kind,
      timestamp: Date.now(),
    },
    terminate: false,
  };
}

export function quoteRaw(raw: string): string {
  if (raw.length <= maxQuotedArgumentChars) return JSON.stringify(raw);
  return `${JSON.stringify(raw.slice(0, maxQuotedArgumentChars))} … (${raw.length} characters in all)`;
}

/** Synthetic results for the calls of an assistant message that failed, was aborted, or whose run was interrupted. */
export function unexecutedResults(
  calls: readonly ToolCallContent[],
  registry: ToolLookup,
  reason: 'error' | 'aborted' | 'interrupted',
): ToolResultMessage[] {
  const text =
    reason === 'aborted'
      ? 'Cancelled'
      : reason === 'error'
        ? "Not executed: the model's response ended with an error."
        : 'Not executed: the conversation was interrupted before this call ran.';
  return calls.map((call) => synthetic(call, registry.get(call.name), text, 'cancelled').message);
}
