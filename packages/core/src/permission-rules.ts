import { AgentError } from './errors.js';
import { resolvePathPattern } from './path-rules.js';

// The rule language of PermissionPolicy: `toolPattern` or `toolPattern(subjectPattern)`.

// `name`, `*`, `prefix*`, `@source`, `@source/name`, `@source/prefix*`, `@source/*`.
export const toolPatternSyntax =
  /^(?:\*|[a-zA-Z0-9_-]{1,64}\*?|@[^\s/()]+(?:\/(?:\*|[a-zA-Z0-9_-]{1,64}\*?))?)$/;

export interface ParsedRule {
  text: string;
  kind: ParsedRuleKind;
  toolPattern: string;
  /** The subject pattern as written; undefined: the rule covers every subject of its tools, and calls with none. */
  subjectText: string | undefined;
  subject: SubjectPattern | undefined;
  /** The subject read as a real-path pattern, for path tools; undefined when it can never match one. */
  pathSubject: SubjectPattern | undefined;
}

export type ParsedRuleKind = 'allow' | 'ask' | 'deny';

export interface SubjectPattern {
  /** The pattern split at each `*`: the first part is a prefix, the last a suffix. */
  parts: readonly string[];
}

/**
 * Whether `subject` matches a subject pattern: anchored at both ends, `*` matches any run of
 * characters (including none, `/` and spaces), every other character matches itself.
 */
export function matchesSubjectPattern(subject: string, pattern: string): boolean {
  return matchesParts(subject, { parts: pattern.split('*') });
}

/**
 * Whether a real path matches a deny or ask rule's path pattern — itself or a folder above it
 * (a rule on a directory covers its contents) — also when the two spell an accented name
 * differently (`café` as one code point or as `e` + U+0301 — macOS and git keep
 * whichever a file was made with): both are compared in Unicode NFC too. Widens deny and ask
 * rules only; an allow rule matches the path as it is.
 */
export function matchesPathRule(path: string, pattern: SubjectPattern): boolean {
  const folded = path.normalize('NFC');
  const parts = pattern.parts.map((part) => part.normalize('NFC'));
  const nfc = { parts };
  // A rule on a directory covers what is inside it: `deny Read(./secrets)` also denies
  // `secrets/key` (as a walk never enters it). So the path, then each folder above it.
  for (let current = path, other = folded; ; ) {
    if (matchesParts(current, pattern) || matchesParts(other, nfc)) return true;
    const cut = current.lastIndexOf('/');
    const otherCut = other.lastIndexOf('/');
    if (cut <= 0 || otherCut <= 0) return false;
    current = current.slice(0, cut);
    other = other.slice(0, otherCut);
  }
}

/**
 * Whether `subject` matches: the glob itself, or — for a pattern ending in ` *` (`rm *`) — the
 * bare command before it (`rm`), so a rule about a command also covers it without arguments.
 */
export function matchesParts(subject: string, pattern: SubjectPattern): boolean {
  const { parts } = pattern;
  if (matchesGlob(subject, parts)) return true;
  const before = parts.at(-2);
  if (parts.length >= 2 && parts.at(-1) === '' && before?.endsWith(' ') === true) {
    return matchesGlob(`${subject} `, parts);
  }
  return false;
}

function matchesGlob(subject: string, parts: readonly string[]): boolean {
  const first = parts[0] ?? '';
  if (parts.length === 1) return subject === first;
  const last = parts[parts.length - 1] ?? '';
  if (subject.length < first.length + last.length) return false;
  if (!subject.startsWith(first) || !subject.endsWith(last)) return false;
  // Greedy leftmost search is exact for `*`-only globs and never backtracks (no exponential cases).
  let position = first.length;
  const end = subject.length - last.length;
  for (let index = 1; index < parts.length - 1; index++) {
    const part = parts[index] ?? '';
    const found = subject.indexOf(part, position);
    if (found === -1 || found + part.length > end) return false;
    position = found + part.length;
  }
  return true;
}

export function parseRule(
  text: string,
  kind: ParsedRuleKind,
  workspaceRoot: string | undefined,
): ParsedRule {
  const fail = (why: string): never => {
    throw new AgentError(`Invalid permission rule "${text}" in ${kind}: ${why}`);
  };
  if (typeof text !== 'string') {
    throw new AgentError(
      `Invalid permission rule in ${kind}: expected a string, got ${typeof text}`,
    );
  }
  const rule = text.trim();
  const open = rule.indexOf('(');
  const toolPattern = open === -1 ? rule : rule.slice(0, open);
  if (toolPattern === '') fail('it names no tool pattern');
  if (!toolPatternSyntax.test(toolPattern)) {
    fail(
      `"${toolPattern}" is not a tool pattern (name, *, prefix*, @source, @source/name or @source/prefix*)`,
    );
  }
  if (open === -1) {
    return {
      text,
      kind,
      toolPattern,
      subjectText: undefined,
      subject: undefined,
      pathSubject: undefined,
    };
  }
  if (!rule.endsWith(')')) fail('a subject pattern must be closed by ")" at the end of the rule');
  const subject = rule.slice(open + 1, -1);
  if (subject === '')
    fail('the subject pattern is empty; drop the parentheses to cover every subject');
  const path = resolvePathPattern(subject, workspaceRoot);
  return {
    text,
    kind,
    toolPattern,
    subjectText: subject,
    subject: { parts: subject.split('*') },
    pathSubject: path.ok ? { parts: path.pattern.split('*') } : undefined,
  };
}

export function parseToolPattern(text: string): string {
  if (typeof text !== 'string' || !toolPatternSyntax.test(text.trim())) {
    throw new AgentError(
      `Invalid tool pattern ${JSON.stringify(text)} in disabledTools: expected name, *, prefix*, @source, @source/name or @source/prefix*`,
    );
  }
  return text.trim();
}
