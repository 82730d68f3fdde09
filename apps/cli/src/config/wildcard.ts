/**
 * Names matched against settings' globs where `*` stands for any run of characters
 * (`mcp__github__*`, `*_file`). A two-pointer match, not a regular expression: `^.*a.*a…b$` on
 * JavaScript's backtracking engine took minutes against one tool name for a glob with eight `*`s.
 */

/** Whether `text` matches `glob` whole (`*`: any characters); time at most glob × text. */
export function wildcardMatch(glob: string, text: string): boolean {
  let at = 0;
  let from = 0;
  // The last `*` seen and where in the text its run ends so far: on a mismatch it takes one more.
  let star = -1;
  let mark = 0;
  while (from < text.length) {
    const char = glob[at];
    if (char === '*') {
      star = at++;
      mark = from;
    } else if (char !== undefined && char === text[from]) {
      at++;
      from++;
    } else if (star !== -1) {
      at = star + 1;
      from = ++mark;
    } else {
      return false;
    }
  }
  while (glob[at] === '*') at++;
  return at === glob.length;
}

/** {@link wildcardMatch} in the shape of a `RegExp`'s `test`. */
export function wildcardPattern(glob: string): { test(text: string): boolean } {
  return { test: (text) => wildcardMatch(glob, text) };
}
