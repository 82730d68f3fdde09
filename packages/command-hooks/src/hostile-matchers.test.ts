/**
 * A hook's `matcher` comes from a settings file a downloaded project can hold. On JavaScript's
 * backtracking engine these took minutes against one tool name — when the settings were read
 * (checked against Claude Code's tool names) and on every tool call; on RE2 they take
 * microseconds. A test here that hangs is the failure.
 */
import { describe, expect, it } from 'vitest';
import { HooksConfigError, matches, parseHooksConfig } from './index.js';

const hostile = ['(\\w|\\w|\\w|\\w|\\w|\\w)*!', '((\\w*)*)*!', '([a-z_]+)+\\d', '(.*_){12}x'];

const parse = (matcher: string) =>
  parseHooksConfig(
    { PreToolUse: [{ matcher, hooks: [{ type: 'command', command: 'true' }] }] },
    '/p/.agent/settings.json: hooks',
  );

describe('hostile matchers', () => {
  it.each(hostile)('%s is read and matches no long tool name', (matcher) => {
    expect(() => parse(matcher)).not.toThrow();
    expect(matches(matcher, 'mcp__github__create_pull_request_review_comment_reply')).toBe(false);
    expect(matches(matcher, ['EnterPlanMode', 'NotebookEdit', 'a_b_c_d_e_f_g_h_i_j_k_l_m_n'])).toBe(
      false,
    );
  });

  it('a matcher still selects what it names', () => {
    expect(matches('(\\w|\\w)*!', 'x!')).toBe(true);
    expect(matches('mcp__github__.*', 'mcp__github__create_issue')).toBe(true);
    expect(matches('Edit|Write', ['write_file', 'Write'])).toBe(true);
    expect(matches('Edit|Write', 'Writer')).toBe(false);
  });

  it.each(['(?=Bash)Bash', '(a)\\1', '(?<!x)Bash'])(
    '%s (lookaround, back-reference) is refused, naming the file, key and syntax',
    (matcher) => {
      expect(() => parse(matcher)).toThrow(HooksConfigError);
      expect(() => parse(matcher)).toThrow(
        /\/p\/\.agent\/settings\.json: hooks\.PreToolUse\[0\]\.matcher is not a valid regular expression \(RE2 syntax/,
      );
    },
  );
});
