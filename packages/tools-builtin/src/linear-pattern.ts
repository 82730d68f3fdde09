/**
 * Regular expressions over text the model writes (a command line, a sed or awk script) that
 * JavaScript's backtracking engine could take seconds to hours over: the same expressions on RE2's
 * engine (`re2js`), linear in the text. Written in RE2's syntax with JavaScript's meaning of `\s`
 * and `.` spelled out (RE2's `\s` lacks `\v` and Unicode spaces; its `.` matches `\r`), so the
 * answer is the one the JavaScript expression gave.
 */
import { ToolError } from '@agent/core';
import { RE2JS } from 're2js';

/** JavaScript's `\s`, as the body of an RE2 character class. */
export const spaceClass =
  '\\t\\n\\v\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}';

/** JavaScript's `.` (without the `s` flag), as an RE2 class. */
export const anyButLineEnd = '[^\\n\\r\\x{2028}\\x{2029}]';

/** Compiles an expression in RE2's syntax; `\s` and `.` in it are RE2's (see {@link spaceClass}). */
export function linearPattern(source: string): RE2JS {
  return RE2JS.compile(source);
}

/** Runs `compile` (a glob's or pattern's compilation), its error becoming an `invalid-args` ToolError. */
export function invalidGlobAsToolError<T>(compile: () => T): T {
  try {
    return compile();
  } catch (error) {
    throw new ToolError(`Invalid glob: ${error instanceof Error ? error.message : String(error)}`, {
      kind: 'invalid-args',
    });
  }
}
