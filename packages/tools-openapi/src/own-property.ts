// Names in a document (parameters, properties, security schemes, server variables), in a model's
// arguments and in a server's headers are anyone's choice, `__proto__` and `constructor` included.

/**
 * `record[key] = value` as an own property (`setOwnProperty` of `@agent/core`): plain assignment
 * of `__proto__` would set the object's prototype instead (the entry lost; an object value's
 * fields inherited by every read).
 */
export { setOwnProperty as setOwn } from '@agent/core';

/** `record[key]` only when it is the record's own entry: `constructor` finds no function. */
export function ownEntry<Value>(
  record: Readonly<Record<string, Value>> | undefined,
  key: string,
): Value | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}
