// The messages of a session file, checked before a run sends them: the file is JSON a person (or
// a program) may have edited, and a message of the wrong shape failed only inside a provider's
// conversion, mid-run, as an "unexpected error" — or went to the model as it was.
import { type AssistantMessage, answerableToolCalls, type Message } from '@agent/core';
import * as z from 'zod';

const text = z.looseObject({ type: z.literal('text'), text: z.string() });
const image = z.looseObject({
  type: z.literal('image'),
  data: z.string(),
  mimeType: z.string(),
});
const json = z.looseObject({ type: z.literal('json'), value: z.unknown() });
const thinking = z.looseObject({ type: z.literal('thinking'), thinking: z.string() });
const toolCall = z.looseObject({
  type: z.literal('toolCall'),
  id: z.string(),
  name: z.string(),
  arguments: z.string(),
});

// A provider's own block (Anthropic's server search calls and results), sent back only to it.
const opaque = z.looseObject({
  type: z.literal('opaque'),
  provider: z.string(),
  data: z.looseObject({ type: z.string() }),
});

const message = z.discriminatedUnion('role', [
  z.looseObject({
    role: z.literal('user'),
    content: z.union([z.string(), z.array(z.discriminatedUnion('type', [text, image]))]),
  }),
  z.looseObject({
    role: z.literal('assistant'),
    content: z.array(z.discriminatedUnion('type', [text, thinking, toolCall, opaque])),
  }),
  z.looseObject({
    role: z.literal('toolResult'),
    toolCallId: z.string(),
    toolName: z.string(),
    content: z.array(z.discriminatedUnion('type', [text, image, json])),
  }),
]);

/**
 * `assistant` as the loop makes it now (core's `answerableToolCalls`: a call id repeated within
 * it or used earlier gets a fresh one, an empty name `unnamed_tool_call`), and for each id it
 * had, the ids its results get, in order: results answer repeated ids in call order.
 */
function renamedCalls(
  assistant: AssistantMessage,
  before: readonly Message[],
): { message: AssistantMessage; results: Map<string, string[]> } {
  const message = answerableToolCalls(assistant, before);
  const results = new Map<string, string[]>();
  message.content.forEach((block, index) => {
    const original = assistant.content[index];
    if (block.type !== 'toolCall' || original?.type !== 'toolCall') return;
    const ids = results.get(original.id) ?? [];
    ids.push(block.id);
    results.set(original.id, ids);
  });
  return { message, results };
}

/**
 * `messages` as the session's messages, or why not: the first problem, naming the message (from
 * 1) and the place in it — `message 3: "role" is "bogus" (user, assistant or toolResult)`.
 * Tool call ids an older version left repeated (two results for one id, which every provider
 * refuses) are made unique, each result following its call.
 */
export function checkSavedMessages(
  messages: readonly unknown[],
): { messages: Message[] } | { problem: string } {
  // The calls of the latest assistant message not answered yet: a tool result must answer one
  // (every provider refuses a result whose call is not right before it — each run of the session
  // would fail on it, mid-run, as the provider's 400).
  let open = new Map<string, string[]>();
  const repaired: Message[] = [];
  for (const [index, entry] of messages.entries()) {
    const parsed = message.safeParse(entry);
    if (parsed.success) {
      const checked = entry as Message;
      if (checked.role === 'assistant') {
        const renamed = renamedCalls(checked, repaired);
        open = renamed.results;
        repaired.push(renamed.message);
      } else if (checked.role === 'user') {
        open = new Map();
        repaired.push(checked);
      } else {
        const id = open.get(checked.toolCallId)?.shift();
        if (id === undefined)
          return {
            problem: `message ${index + 1}: a tool result for the call ${JSON.stringify(checked.toolCallId)}, which the assistant message before it did not make (or which was answered already)`,
          };
        repaired.push(id === checked.toolCallId ? checked : { ...checked, toolCallId: id });
      }
      continue;
    }
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` at ${issue.path.map(String).join('.')}` : '';
    const role = (entry as { role?: unknown } | null)?.role;
    const path = issue?.path ?? [];
    const value = path.reduce<unknown>(
      (at, key) =>
        at !== null && typeof at === 'object'
          ? (at as Record<PropertyKey, unknown>)[key]
          : undefined,
      entry,
    );
    // A block of a kind this version does not know (`{"type": "hologram"}`): most likely a
    // file written by a newer version, which is worth saying.
    const unknownKindAt = (at: string, kind: string, known: string) =>
      `${at} is "${kind.slice(0, 40)}", a kind of content this version does not know (${known}) — a file from a newer version of agent?`;
    // A user message's content is text or a list of blocks: the union hides which block is off.
    const userBlock =
      role === 'user' && path.join('.') === 'content' && Array.isArray(value)
        ? (value as unknown[]).findIndex(
            (block) =>
              !['text', 'image'].includes((block as { type?: unknown } | null)?.type as string),
          )
        : -1;
    const userKind = (value as { type?: unknown }[] | undefined)?.[userBlock]?.type;
    const unknownKind =
      path.at(-1) === 'type' && typeof value === 'string' && issue?.code === 'invalid_union'
        ? unknownKindAt(
            path.map(String).join('.'),
            value,
            (issue as { options?: unknown[] }).options?.map(String).join(', ') ?? 'see the docs',
          )
        : userBlock >= 0 && typeof userKind === 'string'
          ? unknownKindAt(`content.${userBlock}.type`, userKind, 'text, image')
          : undefined;
    const detail =
      path[0] === 'role' || (issue?.code === 'invalid_union' && path.length === 0)
        ? `"role" is ${JSON.stringify(role) ?? 'missing'} (user, assistant or toolResult)${typeof role === 'string' ? ' — a file from a newer version of agent?' : ''}`
        : unknownKind !== undefined
          ? unknownKind
          : path.length > 0 && value === undefined
            ? `${path.map(String).join('.')} is missing`
            : `${issue?.message ?? 'not a message'}${where}`;
    return { problem: `message ${index + 1}: ${detail}` };
  }
  return { messages: repaired };
}
