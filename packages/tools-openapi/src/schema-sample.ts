// Test support (not exported): arguments generated from a tool's own input schema, seeded, so a
// suite can call a sample of a real vendor's operations the way a model would.
import type { JsonSchema } from '@agent/core';

/** A small seeded generator (mulberry32): the same seed gives the same arguments. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const formats: Record<string, string> = {
  'date-time': '2024-05-06T07:08:09Z',
  date: '2024-05-06',
  time: '07:08:09Z',
  email: 'someone@example.com',
  uri: 'https://example.com/x',
  url: 'https://example.com/x',
  uuid: '123e4567-e89b-12d3-a456-426614174000',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  hostname: 'example.com',
};

// Strings tried against a `pattern` when no format says what to send.
const patternCandidates = [
  'abc',
  'ABC',
  'a1',
  '1',
  '12',
  '123456',
  'AC00000000000000000000000000000000',
  'SM00000000000000000000000000000000',
  'PN00000000000000000000000000000000',
  'US',
  'en-US',
  '+15005550006',
  '#ff00aa',
  'ff00aa',
  'a-b',
  'a_b',
];

/**
 * One string a simple regular expression matches: literals, escapes (`\\d`, `\\w`), classes
 * (their first member), groups (their first alternative) and quantifiers (their minimum, at
 * least once for `+`). Undefined when the result does not match after all.
 */
export function exampleForPattern(pattern: string): string | undefined {
  let source = pattern;
  let at = 0;
  const atom = (): string => {
    const char = source[at] ?? '';
    if (char === '\\') {
      const next = source[at + 1] ?? '';
      at += 2;
      return next === 'd' ? '0' : next === 'w' ? 'a' : next === 's' ? ' ' : next;
    }
    if (char === '[') {
      const end = source.indexOf(']', at + 2);
      const body = source.slice(at + 1, end === -1 ? source.length : end);
      at = end === -1 ? source.length : end + 1;
      if (body.startsWith('^')) return 'a';
      if (body.startsWith('\\d')) return '0';
      if (body.startsWith('\\w')) return 'a';
      return body[0] === '\\' ? (body[1] ?? 'a') : (body[0] ?? 'a');
    }
    if (char === '(') {
      let depth = 0;
      let end = at;
      for (; end < source.length; end++) {
        if (source[end] === '\\') end++;
        else if (source[end] === '(') depth++;
        else if (source[end] === ')' && --depth === 0) break;
      }
      let inner = source.slice(at + 1, end).replace(/^\?:/, '');
      at = end + 1;
      let level = 0;
      for (let index = 0; index < inner.length; index++) {
        if (inner[index] === '\\') index++;
        else if (inner[index] === '(') level++;
        else if (inner[index] === ')') level--;
        else if (inner[index] === '|' && level === 0) {
          inner = inner.slice(0, index);
          break;
        }
      }
      return exampleBody(inner);
    }
    at++;
    return char === '.' ? 'a' : char;
  };
  function exampleBody(body: string): string {
    const saved = [source, at] as const;
    source = body;
    at = 0;
    let out = '';
    while (at < source.length) {
      const char = source[at];
      if (char === '^' || char === '$') {
        at++;
        continue;
      }
      if (char === '|') break;
      const text = atom();
      const quantifier = /^(\{(\d+)(,\d*)?\}|[+*?])\??/.exec(source.slice(at));
      let times = 1;
      if (quantifier !== null) {
        at += quantifier[0].length;
        const symbol = quantifier[1] ?? '';
        times = symbol === '*' || symbol === '?' ? 0 : symbol === '+' ? 1 : Number(quantifier[2]);
      }
      out += text.repeat(times);
    }
    [source, at] = saved;
    return out;
  }
  const example = exampleBody(pattern);
  try {
    return new RegExp(pattern, 'u').test(example) ? example : undefined;
  } catch {
    return undefined;
  }
}

function sampleString(schema: Schema, random: () => number): string {
  const format =
    typeof schema.format === 'string' && Object.hasOwn(formats, schema.format)
      ? formats[schema.format]
      : undefined;
  if (format !== undefined) return format;
  const min = typeof schema.minLength === 'number' ? schema.minLength : 1;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Math.max(min, 8);
  if (typeof schema.pattern === 'string') {
    let regex: RegExp | undefined;
    try {
      regex = new RegExp(schema.pattern, 'u');
    } catch {
      regex = undefined;
    }
    const example = exampleForPattern(schema.pattern);
    if (example !== undefined && example.length >= min && example.length <= max) return example;
    const found = patternCandidates.find(
      (candidate) =>
        regex?.test(candidate) === true && candidate.length >= min && candidate.length <= max,
    );
    if (found !== undefined) return found;
  }
  const length = Math.max(min, Math.min(max, 3 + Math.floor(random() * 4)));
  return 'x'.repeat(length);
}

function sampleNumber(schema: Schema, integer: boolean): number {
  const minimum =
    typeof schema.minimum === 'number'
      ? schema.minimum
      : typeof schema.exclusiveMinimum === 'number'
        ? schema.exclusiveMinimum + (integer ? 1 : 0.5)
        : 1;
  const maximum = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  let value = Math.max(minimum, 1);
  if (maximum !== undefined) value = Math.min(value, maximum);
  if (typeof schema.multipleOf === 'number' && schema.multipleOf > 0)
    value = Math.ceil(value / schema.multipleOf) * schema.multipleOf;
  return integer ? Math.ceil(value) : value;
}

/** A value that should satisfy `schema`: required fields always, optional ones now and then. */
export function sampleValue(schema: unknown, random: () => number, depth = 0): unknown {
  if (!isSchema(schema)) return 'x';
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const options = schema.enum.filter((value) => value !== null);
    return options[Math.floor(random() * options.length)] ?? schema.enum[0];
  }
  if (schema.default !== undefined && random() < 0.5) return schema.default;
  for (const key of ['oneOf', 'anyOf']) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) {
      const base = { ...schema };
      delete base[key];
      return sampleValue({ ...base, ...(options[0] as Schema) }, random, depth);
    }
  }
  if (Array.isArray(schema.allOf)) {
    const merged: Schema = { ...schema, allOf: undefined };
    const properties: Schema = isSchema(schema.properties) ? { ...schema.properties } : {};
    const required = new Set<string>(Array.isArray(schema.required) ? schema.required : []);
    for (const part of schema.allOf) {
      if (!isSchema(part)) continue;
      Object.assign(merged, part, { properties: undefined, required: undefined });
      if (isSchema(part.properties)) Object.assign(properties, part.properties);
      if (Array.isArray(part.required)) for (const name of part.required) required.add(name);
    }
    delete merged.allOf;
    return sampleValue({ ...merged, properties, required: [...required] }, random, depth);
  }
  const types = Array.isArray(schema.type)
    ? schema.type.filter((type) => type !== 'null')
    : [schema.type];
  const type =
    types[0] ??
    (isSchema(schema.properties) ? 'object' : schema.items !== undefined ? 'array' : 'string');
  switch (type) {
    case 'string':
      return sampleString(schema, random);
    case 'integer':
      return sampleNumber(schema, true);
    case 'number':
      return sampleNumber(schema, false);
    case 'boolean':
      return random() < 0.5;
    case 'null':
      return null;
    case 'array': {
      const count = Math.max(typeof schema.minItems === 'number' ? schema.minItems : 1, 1);
      return Array.from({ length: count }, () => sampleValue(schema.items, random, depth + 1));
    }
    default: {
      const out: Record<string, unknown> = {};
      const properties = isSchema(schema.properties) ? schema.properties : {};
      const required = new Set(Array.isArray(schema.required) ? schema.required : []);
      for (const [name, sub] of Object.entries(properties)) {
        const optional = !required.has(name);
        if (optional && (depth > 1 || random() < 0.7)) continue;
        out[name] = sampleValue(sub, random, depth + 1);
      }
      return out;
    }
  }
}

/** Arguments for a tool from its input schema. */
export function sampleArguments(schema: JsonSchema, seed: number): Record<string, unknown> {
  return sampleValue(schema, seededRandom(seed)) as Record<string, unknown>;
}
