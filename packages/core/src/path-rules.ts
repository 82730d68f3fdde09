import type { PolicyTool } from './permission-types.js';
import type { PathFamily, ToolPathAccess } from './tool.js';
import { matchesToolPattern } from './tool-registry.js';

/** A subject pattern read as a path pattern: the absolute pattern, or why it can never match. */
export type PathPatternOutcome = { ok: true; pattern: string } | { ok: false; problem: string };

/**
 * Reads a rule's subject pattern as a pattern over real paths (file tools' subjects). A pattern
 * starting with `*` (`*\/secret.txt`, `**\/.env`) matches anywhere and is kept; an absolute one
 * is kept with `.`, `..` and empty segments folded; a relative one (`secret.txt`,
 * `./secret.txt`, `src/**`) is resolved against `root`, the workspace root. Real paths never
 * start with `~` nor end with `/`, so such patterns are reported, as is a relative pattern
 * without a root. Paths use `/` (POSIX).
 */
export function resolvePathPattern(pattern: string, root: string | undefined): PathPatternOutcome {
  if (pattern.startsWith('*')) return { ok: true, pattern };
  if (pattern === '~' || pattern.startsWith('~/')) {
    return { ok: false, problem: '"~" is not expanded: write the absolute path' };
  }
  if (pattern.length > 1 && pattern.endsWith('/')) {
    return {
      ok: false,
      problem: `a real path never ends with "/": write "${pattern}*" to cover what is inside`,
    };
  }
  let absolute = pattern;
  if (!pattern.startsWith('/')) {
    if (root === undefined) {
      return {
        ok: false,
        problem: 'a relative path needs the workspace root, and none was given (workspaceRoot)',
      };
    }
    absolute = `${root.replace(/(?<!\/)\/+$/, '')}/${pattern}`;
  }
  return foldSegments(absolute);
}

/** `/a/./b//c/../d` → `/a/b/d`; `..` right after a segment with a wildcard cannot be folded. */
function foldSegments(absolute: string): PathPatternOutcome {
  const kept: string[] = [];
  for (const segment of absolute.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment !== '..') {
      kept.push(segment);
      continue;
    }
    const previous = kept.at(-1);
    if (previous?.includes('*') === true) {
      return { ok: false, problem: `".." after a wildcard segment cannot be resolved` };
    }
    kept.pop();
  }
  return { ok: true, pattern: `/${kept.join('/')}` };
}

/** The families a tool with this path access belongs to: what it reads, what it writes. */
export function pathFamiliesOf(access: ToolPathAccess | undefined): readonly PathFamily[] {
  switch (access) {
    case undefined:
      return [];
    case 'read':
      return ['read'];
    case 'write':
      return ['write'];
    case 'read-write':
      return ['read', 'write'];
    default: {
      const exhaustive: never = access;
      return exhaustive;
    }
  }
}

/**
 * The family a rule about a tool with this access is about: a rule on a reader covers every
 * reader; a rule on a tool that writes (edit_file reads too) covers every writer.
 */
export function ruleFamilyOf(access: ToolPathAccess): PathFamily {
  return access === 'read' ? 'read' : 'write';
}

/** Kinds of rules: allow rules name tools by their own name only (an alias never widens an allow). */
export type RuleKind = 'allow' | 'ask' | 'deny' | 'disabled';

/** Whether `pattern` names `tool` for a rule of this kind (deny, ask and disabled: aliases too). */
export function ruleNamesTool(tool: PolicyTool, pattern: string, kind: RuleKind): boolean {
  const names = kind === 'allow' ? [tool.name] : [tool.name, ...(tool.aliases ?? [])];
  const source = tool.source;
  return names.some((name) =>
    matchesToolPattern(source === undefined ? { name } : { name, source }, pattern),
  );
}

/** The path families a rule's tool pattern names among `tools` (see {@link ruleFamilyOf}). */
export function familiesNamedBy(
  pattern: string,
  kind: RuleKind,
  tools: readonly PolicyTool[],
): PathFamily[] {
  const families = new Set<PathFamily>();
  for (const tool of tools) {
    const access = tool.policy?.pathAccess;
    if (access !== undefined && ruleNamesTool(tool, pattern, kind))
      families.add(ruleFamilyOf(access));
  }
  return [...families];
}
