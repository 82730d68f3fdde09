const maxNameLength = 64;
const hashLength = 8;

/**
 * A wire-safe tool name (`^[a-zA-Z0-9_-]{1,64}$`) for any text: other characters become `_`,
 * runs of `_` collapse, and a name longer than 64 characters keeps its first 55 and ends with
 * `_` and an 8-hex-digit hash of the whole text, so long names stay distinct and deterministic;
 * a name that would start with a digit starts with `op_`. Returns `undefined` when nothing usable is left (e.g. only punctuation).
 */
export function sanitizeToolName(text: string): string | undefined {
  let cleaned = text
    .replace(/[^a-zA-Z0-9_-]+/g, '_')
    .replace(/_{2,}/g, '_')
    // The lookbehind tries a trailing run once, not from each of its characters (quadratic).
    .replace(/^[_-]+|(?<![_-])[_-]+$/g, '');
  if (cleaned === '') return undefined;
  // Gemini (and other function-calling APIs) refuse a name that starts with a digit.
  if (/^[0-9]/.test(cleaned)) cleaned = `op_${cleaned}`;
  if (cleaned.length <= maxNameLength) return cleaned;
  return `${cleaned.slice(0, maxNameLength - hashLength - 1).replace(/(?<![_-])[_-]+$/, '')}_${hash(text)}`;
}

/**
 * Names for a list of candidates, in order: each sanitised (falling back to `fallbacks[i]`, then
 * to `tool_<hash>`), and made unique by suffixing `_2`, `_3`… (shortened to stay within 64).
 */
export function uniqueToolNames(
  candidates: readonly string[],
  fallbacks: readonly (string | undefined)[] = [],
): string[] {
  const used = new Set<string>();
  // The next suffix to try per base: a document that gives 10,000 operations one operationId
  // would otherwise retry `_2`, `_3`… from the start for each (quadratic: minutes at 50,000).
  const nextSuffix = new Map<string, number>();
  return candidates.map((candidate, index) => {
    const fallback = fallbacks[index];
    const base =
      sanitizeToolName(candidate) ??
      (fallback === undefined ? undefined : sanitizeToolName(fallback)) ??
      `tool_${hash(candidate)}`;
    let name = base;
    let suffix = nextSuffix.get(base) ?? 2;
    while (used.has(name)) {
      const tail = `_${suffix}`;
      name = `${base.slice(0, maxNameLength - tail.length)}${tail}`;
      suffix++;
    }
    nextSuffix.set(base, suffix);
    used.add(name);
    return name;
  });
}

/** A property name providers accept (`^[a-zA-Z0-9_.-]{1,64}$`), or undefined when nothing is left. */
export function sanitizePropertyName(text: string): string | undefined {
  const cleaned = text
    .replace(/[^a-zA-Z0-9_.-]+/g, '_')
    .replace(/_{2,}/g, '_')
    .replace(/^_+|(?<!_)_+$/g, '');
  if (cleaned === '') return undefined;
  return cleaned.length <= maxNameLength
    ? cleaned
    : `${cleaned.slice(0, maxNameLength - hashLength - 1)}_${hash(text)}`;
}

/** FNV-1a (32 bit) as 8 hex digits: stable across runs and runtimes, no crypto needed. */
export function hash(text: string): string {
  let value = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    value ^= text.charCodeAt(index);
    value = Math.imul(value, 0x01000193) >>> 0;
  }
  return value.toString(16).padStart(hashLength, '0');
}
