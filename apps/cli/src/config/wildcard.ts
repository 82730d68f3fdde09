/**
 * Names matched against settings' globs where `*` stands for any run of characters
 * (`mcp__github__*`, `*_file`), with core's permission-rule matcher (a greedy search, no
 * backtracking), not a regular expression: `^.*a.*a…b$` on JavaScript's backtracking engine took
 * minutes against one tool name for a glob with eight `*`s.
 */
import { matchesSubjectPattern } from '@agent/core';

/** Whether `text` matches `glob` whole (`*`: any characters), in time linear in both. */
export function wildcardMatch(glob: string, text: string): boolean {
  return matchesSubjectPattern(text, glob);
}

/** {@link wildcardMatch} in the shape of a `RegExp`'s `test`. */
export function wildcardPattern(glob: string): { test(text: string): boolean } {
  return { test: (text) => wildcardMatch(glob, text) };
}
