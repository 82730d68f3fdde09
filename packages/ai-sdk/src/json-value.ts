import { type JsonContent, jsonContentText } from '@agent/core';
import type { JSONValue } from '@ai-sdk/provider';

/**
 * A JSON block's value as the AI SDK's JSON type takes it: what JSON can carry of it (`undefined`
 * → null); a value JSON cannot write at all (a BigInt, a cycle) goes as its description text.
 */
export function jsonValue(block: JsonContent): JSONValue {
  try {
    return JSON.parse(JSON.stringify(block.value) ?? 'null') as JSONValue;
  } catch {
    return jsonContentText(block);
  }
}
