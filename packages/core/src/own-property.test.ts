// Schemas come from third parties and may name a property `__proto__`: JSON.parse makes it an own
// property, but copying a schema by assignment set the copy's prototype instead, so the property
// vanished while `required` still named it.
import { describe, expect, it } from 'vitest';
import { inlineJsonSchema, type JsonSchema } from './json-schema.js';
import { repairJsonSchema } from './json-schema-repair.js';
import { validateWithJsonSchema } from './json-schema-validation.js';

const schema = (): JsonSchema =>
  JSON.parse(
    // A repeated enum value is repaired, so the repair copies the node and its parent map.
    '{"type":"object","properties":{"__proto__":{"type":"string","enum":["a_a","a_a","b"]},"b":{"$ref":"#/$defs/__proto__"}},"required":["__proto__"],"patternProperties":{"__proto__":{"enum":["a_a","a_a"]}},"$defs":{"__proto__":{"type":"number"}}}',
  ) as JsonSchema;

describe('a property named __proto__', () => {
  it('survives inlining', () => {
    const inlined = inlineJsonSchema(schema());
    expect(Object.hasOwn(inlined.properties ?? {}, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(inlined.properties)).toBe(Object.prototype);
    expect(inlined.properties?.b).toEqual({ type: 'number' });
  });

  it('survives repair', () => {
    const { schema: repaired } = repairJsonSchema(schema()) as { schema: JsonSchema };
    expect(Object.hasOwn(repaired.properties ?? {}, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(repaired.properties)).toBe(Object.prototype);
    // A pattern spelled `__proto__`, whose schema the repair rewrote.
    expect(Object.hasOwn((repaired.patternProperties as object) ?? {}, '__proto__')).toBe(true);
  });

  it('is validated: required, and typed', () => {
    const inlined = inlineJsonSchema(schema());
    expect(validateWithJsonSchema(inlined, JSON.parse('{"__proto__":"a_a"}')).ok).toBe(true);
    expect(validateWithJsonSchema(inlined, JSON.parse('{"__proto__":5}')).ok).toBe(false);
    expect(validateWithJsonSchema(inlined, {}).ok).toBe(false);
  });
});
