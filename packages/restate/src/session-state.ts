// A session's conversation in the object's state, in chunks: Restate refuses a state value over
// its message size limit (32 MiB by default) and retries the invocation for ever, so one value
// holding the whole conversation capped a session's length. (The object's whole state must still
// fit in what Restate loads for one invocation, `worker.invoker.per-invocation-memory-limit`:
// agent-session.ts refuses a prompt before a session reaches it.) Each chunk holds at most
// `chunkBytes` of JSON (a single larger message alone); a prompt rewrites only the last chunk and
// adds new ones, since the loop only ever appends to a conversation.
import type { Compaction, Message } from '@agent/core';
import type { ObjectContext, ObjectSharedContext } from '@restatedev/restate-sdk';

/** Bytes of JSON a chunk of the conversation holds at most (unless one message is larger). */
export const chunkBytes = 2 * 1024 * 1024;

/** The message count of each chunk, in order. */
const chunksKey = 'messages.chunks';
/** The bytes of JSON of each chunk, in order. */
const bytesByChunkKey = 'messages.chunk-bytes';
const chunkKey = (index: number) => `messages.${index}`;
/** Where versions before chunking kept the whole conversation. */
const legacyKey = 'messages';
const compactionsKey = 'compactions';
/** Bytes of JSON the conversation's chunks hold in all. */
const bytesKey = 'messages.bytes';

/** Bytes of JSON the stored conversation takes (0 for one stored before this was kept). */
export async function storedBytes(ctx: ObjectSharedContext): Promise<number> {
  return (await ctx.get<number>(bytesKey)) ?? 0;
}

/** The session's conversation (from chunks, or the one value older versions wrote). */
export async function readMessages(ctx: ObjectSharedContext): Promise<Message[]> {
  const chunks = await ctx.get<number[]>(chunksKey);
  if (chunks === null || chunks === undefined) return (await ctx.get<Message[]>(legacyKey)) ?? [];
  const messages: Message[] = [];
  for (const [index, count] of chunks.entries()) {
    const chunk = (await ctx.get<Message[]>(chunkKey(index))) ?? [];
    // A prompt finishing meanwhile may have grown the chunk already (packing keeps a chunk's
    // start), not yet the index: the index's count is the consistent view.
    if (chunk.length < count)
      throw new Error(
        `The session's state is damaged: chunk ${index} holds ${chunk.length} messages, its index says ${count}`,
      );
    messages.push(...chunk.slice(0, count));
  }
  return messages;
}

/** The compactions the session's conversation carries (`Agent.compactions`). */
export async function readCompactions(ctx: ObjectSharedContext): Promise<Compaction[]> {
  return (await ctx.get<Compaction[]>(compactionsKey)) ?? [];
}

/**
 * Stores the conversation after a prompt: the chunks wholly before `previousCount` (the length it
 * had before) stay; the rest is packed again from the start of the last of them. Chunks are
 * written before the index, and packing keeps a chunk's first messages, so a reader meanwhile
 * sees the old conversation or the new one.
 */
export async function writeMessages(
  ctx: ObjectContext,
  conversation: {
    messages: readonly Message[];
    previousCount: number;
    compactions: readonly Compaction[];
    /** Applied to each message written (credential values redacted). */
    redact: (message: Message) => Message;
  },
): Promise<void> {
  const { messages, previousCount, compactions } = conversation;
  const before = (await ctx.get<number[]>(chunksKey)) ?? [];
  const kept: number[] = [];
  let start = 0;
  for (const count of before) {
    // The last old chunk is always packed again (it may fill up); so is any past the old end.
    if (
      kept.length === before.length - 1 ||
      start + count > Math.min(previousCount, messages.length)
    )
      break;
    kept.push(count);
    start += count;
  }
  const packed = pack(messages.slice(start).map(conversation.redact));
  const keptBytes = (await ctx.get<number[]>(bytesByChunkKey))?.slice(0, kept.length) ?? [];
  const bytes = [...keptBytes, ...packed.map((chunk) => chunk.bytes)];
  const counts = [...kept, ...packed.map((chunk) => chunk.messages.length)];
  for (const [offset, chunk] of packed.entries())
    ctx.set(chunkKey(kept.length + offset), chunk.messages);
  for (let index = counts.length; index < before.length; index++) ctx.clear(chunkKey(index));
  ctx.set(chunksKey, counts);
  ctx.set(bytesByChunkKey, bytes);
  ctx.set(
    bytesKey,
    bytes.reduce((sum, size) => sum + size, 0),
  );
  ctx.clear(legacyKey);
  if (compactions.length > 0) ctx.set(compactionsKey, compactions);
  else ctx.clear(compactionsKey);
}

/** Messages in order, in chunks of at most {@link chunkBytes} of JSON (a larger message alone). */
function pack(messages: readonly Message[]): { messages: Message[]; bytes: number }[] {
  const chunks: { messages: Message[]; bytes: number }[] = [];
  let current: Message[] = [];
  let size = 0;
  for (const message of messages) {
    const bytes = Buffer.byteLength(JSON.stringify(message), 'utf8');
    if (current.length > 0 && size + bytes > chunkBytes) {
      chunks.push({ messages: current, bytes: size });
      current = [];
      size = 0;
    }
    current.push(message);
    size += bytes;
  }
  if (current.length > 0) chunks.push({ messages: current, bytes: size });
  return chunks;
}
