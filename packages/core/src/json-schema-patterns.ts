/**
 * Regular expressions in tool schemas, checked without backtracking. A schema comes from an MCP
 * server or an API document, the string it checks from the model: on JavaScript's backtracking
 * engine `pattern: "\\d+\\.?\\d+x"` against 30,000 digits, or the validator's own `url` format
 * against `http://` and 40 letters, runs for hours on the thread the loop needs to notice an
 * abort. So a `pattern` (and the `url` format) is checked on RE2's engine (`re2js`: time linear
 * in the string), named as a format of the validator under a name of its own (answered through a
 * bounded cache, so the validator's table never grows with the patterns it sees); a pattern RE2
 * cannot run (lookaround, back-references) is not checked. `patternProperties` is matched by the
 * validator itself against property names: its patterns are kept only when their shape cannot
 * blow up (see {@link backtrackingRisk}), and names are bounded in length (see
 * {@link maxPatternPropertyNameLength}).
 */
import { format } from '@cfworker/json-schema';
import { RE2JS } from 're2js';

// The validator's format table. A pattern's format is not an entry of it: a server that keeps
// listing tools with new patterns would grow a table nothing ever empties. Names under
// `patternPrefix` are answered by a proxy behind the table (its prototype), through a bounded
// cache of compiled patterns; an evicted pattern is compiled again on its next check, so a
// schema compiled long ago is still enforced, never skipped for a missing format.
const formats = format as Record<string, ((value: string) => boolean) | undefined>;
const formatPrefix = '\u0000agent-linear:';
const patternPrefix = `${formatPrefix}pattern:`;
const urlFormat = `${formatPrefix}url`;

/** How many compiled patterns are kept; past it the least recently used is dropped. */
export const linearPatternCacheSize = 1_000;

// Insertion order is recency: a hit is moved to the end, the first key is the oldest.
const compiledPatterns = new Map<string, (value: string) => boolean>();

/** The check of `pattern` on RE2's engine, from the cache or compiled now; `undefined` if RE2 cannot run it. */
function patternCheck(pattern: string): ((value: string) => boolean) | undefined {
  const cached = compiledPatterns.get(pattern);
  if (cached !== undefined) {
    compiledPatterns.delete(pattern);
    compiledPatterns.set(pattern, cached);
    return cached;
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch {
    return undefined;
  }
  const check = (value: string): boolean => compiled.test(value);
  compiledPatterns.set(pattern, check);
  if (compiledPatterns.size > linearPatternCacheSize) {
    const oldest = compiledPatterns.keys().next().value;
    if (oldest !== undefined) compiledPatterns.delete(oldest);
  }
  return check;
}

let lookupInstalled = false;

/**
 * Puts the pattern lookup behind the format table once: the validator reads `format[name]`, an
 * own entry (the standard formats, `url`) answers first, and only a name under `patternPrefix`
 * that no entry holds reaches the proxy.
 */
function installPatternLookup(): void {
  if (lookupInstalled) return;
  lookupInstalled = true;
  const behind = Object.getPrototypeOf(formats) as object | null;
  Object.setPrototypeOf(
    formats,
    new Proxy(behind ?? Object.create(null), {
      get(target, key, receiver) {
        if (typeof key === 'string' && key.startsWith(patternPrefix))
          return patternCheck(key.slice(patternPrefix.length));
        return Reflect.get(target, key, receiver);
      },
    }),
  );
}

/**
 * The validator format that checks `pattern` in linear time, or `undefined` when RE2 cannot run
 * it (lookaround, back-references: such a pattern is left unchecked). The format table does not
 * grow: compiled patterns live in a cache of at most {@link linearPatternCacheSize}.
 */
export function linearPatternFormat(pattern: string): string | undefined {
  installPatternLookup();
  return patternCheck(pattern) === undefined ? undefined : `${patternPrefix}${pattern}`;
}

/** How many compiled patterns the cache holds now (at most {@link linearPatternCacheSize}). */
export function linearPatternCacheCount(): number {
  return compiledPatterns.size;
}

/**
 * The validator format that replaces the validator's own `url` (a regular expression that
 * backtracks exponentially): an absolute http, https or ftp URL with a host, as the URL parser
 * reads it.
 */
export function linearUrlFormat(): string {
  formats[urlFormat] ??= (value) => {
    if (!URL.canParse(value) || /\s/.test(value)) return false;
    const url = new URL(value);
    return /^(https?|ftp):$/.test(url.protocol) && url.hostname !== '';
  };
  return urlFormat;
}

/** What a format name of {@link linearPatternFormat} or {@link linearUrlFormat} stands for, for messages. */
export function linearFormatMeaning(
  name: string,
): { pattern: string } | { format: string } | undefined {
  if (name.startsWith(patternPrefix)) return { pattern: name.slice(patternPrefix.length) };
  if (name === urlFormat) return { format: 'url' };
  return undefined;
}

/** Property names longer than this fail a schema with `patternProperties` before it runs. */
export const maxPatternPropertyNameLength = 256;

/**
 * Why a pattern could backtrack for too long on a property name of up to
 * {@link maxPatternPropertyNameLength} characters, or `undefined`: a quantified group that
 * holds a quantifier or an alternation (`(a+)+`, `(a|a)*` — exponential), or more than three
 * unbounded quantifiers (`.*a.*a.*a.*b` — a power of the length per quantifier).
 */
export function backtrackingRisk(pattern: string): string | undefined {
  let unbounded = 0;
  // For each open group: whether it holds a quantifier or `|` so far.
  const groups: boolean[] = [];
  let lastGroupRisky = false;
  let afterGroup = false;
  for (let at = 0; at < pattern.length; at++) {
    const char = pattern[at] as string;
    let quantifier: 'bounded' | 'unbounded' | undefined;
    if (char === '\\') {
      at++;
      afterGroup = false;
      continue;
    }
    if (char === '[') {
      // A class is one atom: skip to its closing bracket.
      at++;
      if (pattern[at] === '^') at++;
      if (pattern[at] === ']') at++;
      while (at < pattern.length && pattern[at] !== ']') at += pattern[at] === '\\' ? 2 : 1;
      afterGroup = false;
      continue;
    }
    if (char === '(') {
      groups.push(false);
      afterGroup = false;
      // A group's kind (`(?:`, `(?=`, `(?!`, `(?<=`, `(?<!`, `(?<name>`) is no repetition.
      const kind = /^\?(?:[:=!]|<[=!]|<[A-Za-z_$][\w$]*>)/.exec(pattern.slice(at + 1));
      if (kind !== null) at += kind[0].length;
      continue;
    }
    if (char === ')') {
      lastGroupRisky = groups.pop() ?? false;
      // What a group holds, the group around it holds too.
      if (lastGroupRisky && groups.length > 0) groups[groups.length - 1] = true;
      afterGroup = true;
      continue;
    }
    if (char === '|') {
      if (groups.length > 0) groups[groups.length - 1] = true;
      afterGroup = false;
      continue;
    }
    if (char === '*' || char === '+') quantifier = 'unbounded';
    else if (char === '?') quantifier = 'bounded';
    else if (char === '{') {
      const counted = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at));
      if (counted !== null) {
        quantifier = counted[2] !== undefined && counted[3] === '' ? 'unbounded' : 'bounded';
        at += counted[0].length - 1;
      }
    }
    if (quantifier === undefined) {
      afterGroup = false;
      continue;
    }
    // A lazy or possessive marker after a quantifier is part of it.
    if (pattern[at + 1] === '?' || pattern[at + 1] === '+') at++;
    if (quantifier === 'unbounded') unbounded++;
    if (afterGroup && lastGroupRisky && char !== '?')
      return 'a repeated group holds a repetition or an alternation';
    if (groups.length > 0) groups[groups.length - 1] = true;
    afterGroup = false;
  }
  return unbounded > 3 ? `${unbounded} unbounded repetitions (at most 3)` : undefined;
}
