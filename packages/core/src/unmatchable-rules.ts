import { familiesNamedBy, type RuleKind, resolvePathPattern, ruleNamesTool } from './path-rules.js';
import type { PolicyTool } from './permission-types.js';

/** A rule (or a disabled-tool pattern) as written, for {@link unmatchableRuleProblems}. */
export interface RuleToCheck {
  kind: RuleKind;
  text: string;
  toolPattern: string;
  /** The subject pattern as written, when the rule has one. */
  subject: string | undefined;
}

/** Edit distance, for "did you mean" (small strings: tool names). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** Why no tool matches `rule`'s tool pattern, with a near name when there is one. */
function noToolProblem(rule: RuleToCheck, tools: readonly PolicyTool[]): string {
  const pattern = rule.toolPattern;
  if (rule.kind === 'allow') {
    const byAlias = tools.find((tool) => ruleNamesTool(tool, pattern, 'deny'));
    if (byAlias !== undefined)
      return `"${pattern}" is an alias of ${byAlias.name}, and allow rules name tools by their own name`;
  }
  const plain = !pattern.includes('*') && !pattern.startsWith('@');
  const near = plain
    ? tools
        .flatMap((tool) => [tool.name, ...(tool.aliases ?? [])])
        .filter((name) => distance(name.toLowerCase(), pattern.toLowerCase()) <= 2)
    : [];
  const hint = near.length > 0 ? ` (did you mean ${near.slice(0, 3).join(', ')}?)` : '';
  return `no tool of this session matches "${pattern}"${hint}`;
}

/**
 * One message per rule that can never match a call of `tools`: its tool pattern names no tool; it
 * has a subject pattern but the tools it reaches (by name or path family) name no subjects; or it
 * reaches only path tools and its pattern is one no real path has. `workspaceRoot` is where
 * relative path patterns resolve.
 */
export function unmatchableRuleProblems(
  rules: readonly RuleToCheck[],
  tools: readonly PolicyTool[],
  workspaceRoot: string | undefined,
): string[] {
  const problems: string[] = [];
  for (const rule of rules) {
    const about =
      rule.kind === 'disabled'
        ? `disabled-tool pattern "${rule.text}"`
        : `${rule.kind} rule "${rule.text}"`;
    const named = tools.filter((tool) => ruleNamesTool(tool, rule.toolPattern, rule.kind));
    if (named.length === 0) {
      problems.push(`${about} can never match: ${noToolProblem(rule, tools)}`);
      continue;
    }
    if (rule.subject === undefined) continue;
    // A path rule on a tool of a family reaches every tool of that family.
    const families = new Set(familiesNamedBy(rule.toolPattern, rule.kind, named));
    const reached = tools.filter((tool) => {
      if (named.includes(tool)) return true;
      const access = tool.policy?.pathAccess;
      if (access === undefined) return false;
      return access === 'read-write' ? families.size > 0 : families.has(access);
    });
    const withSubjects = reached.filter((tool) => tool.permissionSubjects !== undefined);
    const codeTools = named.filter((tool) => tool.policy?.subjectsAreCode === true);
    if (
      rule.kind === 'allow' &&
      rule.subject !== '*' &&
      rule.subject.includes('*') &&
      codeTools.length > 0
    ) {
      const names = codeTools.map((tool) => tool.name).join(', ');
      problems.push(
        `${about} allows only the code written in it: ${names} run${codeTools.length === 1 ? 's' : ''} code, which no pattern can bound, so "*" there is a literal character, not a wildcard (allow the tool by name to allow every call)`,
      );
      continue;
    }
    if (withSubjects.length === 0) {
      const names = named.map((tool) => tool.name).join(', ');
      problems.push(
        `${about} can never match: ${names} name${named.length === 1 ? 's' : ''} no subjects (drop the parentheses to cover the tool)`,
      );
      continue;
    }
    if (withSubjects.every((tool) => tool.policy?.pathAccess !== undefined)) {
      const path = resolvePathPattern(rule.subject, workspaceRoot);
      if (!path.ok) problems.push(`${about} can never match: ${path.problem}`);
    }
  }
  return problems;
}
