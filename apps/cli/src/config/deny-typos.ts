// A --deny rule of the command line naming no tool (`--deny 'Shell(rm *)'`, Gemini CLI's
// `run_shell_command`, a typo such as `bsh(rm *)`) protects nothing: it was a warning, and the
// command it was meant to stop ran. A session and `agent mcp serve` both refuse it before anything
// runs. A server's or document's tools (mcp__…, openapi__…, agent__…) may be absent for a failed
// connection, and a settings file's rule stays a warning; with --tools (or a settings' tools list)
// a real tool may be left out on purpose, so a deny rule on it stays a warning too.

/**
 * The refusal for `denyFlags` (the command line's --deny rules) that `unmatchable` (the policy's
 * `unmatchableRules()`) says match no tool of the session, or undefined when there is none.
 */
export function denyTypoRefusal(
  unmatchable: readonly string[],
  denyFlags: readonly string[] | undefined,
  everyTool: boolean,
): string | undefined {
  const refused = (everyTool ? (denyFlags ?? []) : []).flatMap((rule) =>
    /^(mcp|openapi|agent)__/.test(rule)
      ? []
      : unmatchable.filter((problem) =>
          problem.startsWith(`deny rule "${rule}" can never match: no tool of this session`),
        ),
  );
  if (refused.length === 0) return undefined;
  return `--deny ${refused.map((problem) => problem.replace(/^deny rule /, '')).join('; ')}. A deny rule that matches nothing protects nothing, so agent did not start: name the tool as this session does (bash, read_file, write_file, edit_file… — /tools lists them)`;
}
