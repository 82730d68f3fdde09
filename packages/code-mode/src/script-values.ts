import { type ToolResultContent, type ToolResultMessage, toolResultText } from '@agent/core';

// What a nested call's result becomes inside the script: the tool's content as the model would
// have read it — its text, parsed when it is a JSON object or array — or, for a failure, the
// error the script's `ToolCallError` is built from.

/** The JSON envelope the prelude reads: the call's value, or its error kind and message. */
export function resultEnvelope(message: ToolResultMessage): string {
  const text = contentText(message.content);
  if (message.isError) {
    return JSON.stringify({ ok: false, kind: message.errorKind ?? 'failed', message: text });
  }
  // A result that is one JSON block is that value itself.
  const [only] = message.content;
  if (message.content.length === 1 && only?.type === 'json')
    return JSON.stringify({ ok: true, value: only.value ?? null });
  return JSON.stringify({ ok: true, value: contentValue(text) });
}

/** An error envelope for a call that never reached the loop (unknown tool, unreadable arguments, a limit). */
export function errorEnvelope(kind: string, message: string): string {
  return JSON.stringify({ ok: false, kind, message });
}

/** The result's text blocks (JSON as text) joined by newlines; an image is a `[image <type>]` marker (its data never enters the script). */
function contentText(content: readonly ToolResultContent[]): string {
  return toolResultText(content);
}

/** Text that is a JSON object or array becomes that value; any other text stays a string. */
export function contentValue(text: string): unknown {
  const trimmed = text.trim();
  if (!(trimmed.startsWith('{') || trimmed.startsWith('['))) return text;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return text;
  }
}
