import type { ToolContext } from '@agent/core';
import type { NormalizedOperation } from './normalized-types.js';

// Durable runs (DESIGN §5½): a call whose process died mid-request is repeated on resume only if
// a repeat is harmless. Idempotent HTTP methods are; an unsafe request carries an Idempotency-Key
// derived from its run and call, the same on every attempt, so a server that honours the header
// (Stripe, Adyen, the IETF draft's adopters) performs it once however often it arrives.

/** Methods whose repeat has the effect of one request (RFC 9110 §9.2.2; QUERY is safe). */
const idempotentMethods = new Set(['get', 'head', 'options', 'trace', 'put', 'delete', 'query']);

/** The header (draft-ietf-httpapi-idempotency-key-header). */
export const idempotencyKeyHeader = 'Idempotency-Key';

/** Whether a repeat of the operation's request is harmless by its method alone. */
export function isIdempotentMethod(operation: Pick<NormalizedOperation, 'method'>): boolean {
  return idempotentMethods.has(operation.method);
}

/** Whether the operation declares an `Idempotency-Key` header: its server deduplicates by it. */
export function declaresIdempotencyKey(
  operation: Pick<NormalizedOperation, 'parameters'>,
): boolean {
  return operation.parameters.some(
    (parameter) =>
      parameter.in === 'header' &&
      parameter.name.toLowerCase() === idempotencyKeyHeader.toLowerCase(),
  );
}

/**
 * The key of one call: a hash of its run id and call id, so a resumed run (same run, same call)
 * sends the same key and a different call never does. Outside a run, the call id alone.
 */
export async function idempotencyKeyFor(
  context: Pick<ToolContext, 'toolCallId' | 'run'>,
): Promise<string> {
  const source = `${context.run?.runId ?? ''}\n${context.toolCallId}`;
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(source));
  const hex = Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join(
    '',
  );
  return `agent-${hex.slice(0, 40)}`;
}
