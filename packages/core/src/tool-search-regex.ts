/**
 * The pattern of `tool_search`'s regex mode comes from the model, so it runs on RE2's engine
 * (`re2js`, plain JavaScript): time linear in the text, whatever the pattern. On the JavaScript
 * engine's backtracking matcher a pattern such as `(.*a){12}z` runs for hours over a catalogue's
 * descriptions, on the main thread, where no abort, timeout or Ctrl-C handler gets a turn until
 * it ends. The engine is the one the JSON Schema checks use (`json-schema-patterns.ts`), so it
 * is loaded with the package.
 */
import { RE2JS } from 're2js';

/** The longest pattern accepted (Anthropic's own regex tool search takes 200 characters). */
export const maxSearchPatternLength = 1000;

/** A compiled pattern of the regex mode: whether it matches anywhere in a text (case-insensitive). */
export type SearchPattern = (text: string) => boolean;

/**
 * Compiles a regex-mode pattern (RE2 syntax: JavaScript's without lookaround and back-references).
 * Throws an `Error` whose message says what is wrong with the pattern.
 */
export async function compileSearchPattern(pattern: string): Promise<SearchPattern> {
  if (pattern.length > maxSearchPatternLength)
    throw new Error(
      `the pattern is ${pattern.length} characters long; at most ${maxSearchPatternLength}`,
    );
  let compiled: InstanceType<typeof RE2JS>;
  try {
    compiled = RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      /\(\?[=!<]|\\[1-9]/.test(pattern)
        ? `${reason} (RE2 syntax: no lookaround or back-references)`
        : reason,
    );
  }
  return (text) => compiled.test(text);
}
