/**
 * Sets `record[key]` as an own, enumerable property — `__proto__` included. Schemas and
 * arguments come from third parties, and a property may be named `__proto__`: plain assignment
 * would set the object's prototype instead, dropping the property (while `required` still names
 * it, so no call could ever be valid).
 */
export function setOwnProperty(record: object, key: string, value: unknown): void {
  Object.defineProperty(record, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}
