/**
 * The second line of defence behind the tools' credential-free environments: what the CLI writes
 * down (session files, the transcript, JSON output) never holds the value of a credential variable
 * of its environment, even when it reached the conversation another way (a passed variable, a
 * `.env` file read, the user's own prompt).
 */
import {
  type CredentialStreamRedactor,
  credentialRedactor,
  credentialStreamRedactor,
} from '@agent/core';

let current: ((text: string) => string) | undefined;
/** Credentials the CLI holds outside its environment (MCP servers' configured env and headers). */
const held = new Map<string, string>();

function redactedValues(): Record<string, string | undefined> {
  return { ...process.env, ...Object.fromEntries(held) };
}

/**
 * Replaces every credential value of `process.env` (as it was at the last {@link resetRedaction},
 * or the first call), and of {@link redactAlso}, with `[redacted:NAME]`.
 */
export function redactText(text: string): string {
  current ??= credentialRedactor(redactedValues());
  return current(text);
}

let currentForTools: ((text: string) => string) | undefined;

/**
 * {@link redactText} for what a tool (or a hook) hands the model: also the values' coloured,
 * wrapped, escaped, percent-encoded, reversed, hex and base64 forms (`grep --color`, `base64`, a
 * Kubernetes secret, a JSON writer's `\u00xx`). What the model never reads it cannot repeat, so
 * files and the terminal need only the exact values.
 */
export function redactToolText(text: string): string {
  currentForTools ??= credentialRedactor(redactedValues(), { forms: 'encoded' });
  return currentForTools(text);
}

/** {@link redactJson} with {@link redactToolText}. */
export function redactToolJson(value: unknown): unknown {
  return redactJsonWith(value, redactToolText);
}

/**
 * {@link redactText} for a text shown as it streams in (a model's deltas): a value split across
 * two deltas is redacted too; a tail that may begin one waits for the next delta or `flush`.
 */
export function streamRedactor(): CredentialStreamRedactor {
  return credentialStreamRedactor(redactedValues());
}

/** Reads `process.env` again at the next redaction (after settings added variables to it). */
export function resetRedaction(): void {
  current = undefined;
  currentForTools = undefined;
}

/**
 * Redacts these `name → value` pairs too, where a name or value rule judges them credentials:
 * what the CLI was given for one MCP server (its `env`, its `headers`) is the user's secret as
 * much as a variable of its environment, and a server's error or echo must not hand it to the
 * model or write it down.
 */
export function redactAlso(values: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(values)) held.set(name, value);
  resetRedaction();
}

/** A copy of a JSON value with {@link redactText} applied to every string in it (keys included). */
export function redactJson(value: unknown): unknown {
  return redactJsonWith(value, redactText);
}

function redactJsonWith(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((item) => redactJsonWith(item, redact));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [redact(key), redactJsonWith(item, redact)]),
    );
  return value;
}

/**
 * `value` as JSON text with {@link redactText} applied to every string in it (keys included) —
 * what `JSON.stringify(redactJson(value), null, indent)` gives, without the copies: a session of
 * a hundred MB was copied four times over on every save.
 */
export function redactedJsonText(value: unknown, indent?: number): string {
  // Most saves hold no credential: one scan of the text V8 serialises on its fast path (a
  // replacer leaves it) tells, and only a text that holds one is serialised string by string.
  const plain = JSON.stringify(value, null, indent);
  if (plain === undefined || redactText(plain) === plain) return plain;
  return JSON.stringify(
    value,
    function redacting(this: unknown, _key: string, item: unknown): unknown {
      if (typeof item === 'string') return redactText(item);
      if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
      // A key that holds a credential value (rare): the object is copied with the key redacted.
      const keys = Object.keys(item);
      if (keys.every((key) => redactText(key) === key)) return item;
      return Object.fromEntries(
        keys.map((key) => [redactText(key), (item as Record<string, unknown>)[key]]),
      );
    },
    indent,
  );
}
