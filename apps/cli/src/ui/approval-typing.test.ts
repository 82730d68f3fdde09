// A question (a tool's approval, plan mode's "Approve the plan?") that appears while the user is
// typing a message to the running agent: the letters they go on typing were taken as the answer —
// "c" of "can you also…" was ignored and its "a" granted the tool "always"; "please add…" approved
// the plan with "d". Keys now go on into the line being typed until Enter sends it; only then does
// a key answer. Real terminal (tmux), built CLI, scripted model.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Harness } from '../testing/repl-harness.js';
import { assertBuilt } from '../testing/test-support.js';

const harness = new Harness();
beforeAll(() => assertBuilt());
beforeEach(skipWithout('tmux'));
afterEach(() => harness.dispose());

// Long enough to type into while it runs; the question comes once it is over.
const wait = { toolCalls: [{ name: 'sleep', arguments: { seconds: 4 } }] };

describe('a question that appears while the user is typing (tmux)', () => {
  it('a tool approval: the letters typed on go into the line; the answer comes after Enter', async () => {
    const folder = await harness.folder('agent-cli-approval-typing-');
    const repl = await harness.start({
      ...folder,
      script: {
        steps: [
          wait,
          { toolCalls: [{ name: 'write_file', arguments: { path: 'made.txt', content: 'x\n' } }] },
          { text: 'Done here.' },
          { text: 'Answered the steering.' },
        ],
      },
      args: ['--allow', 'sleep', '--sandbox', 'off'],
    });
    await repl.waitForPrompt();
    repl.submit('make a file');
    await repl.waitForText('sleep');
    repl.tmux.type('c');
    await repl.waitForText('Allow write_file');
    await repl.waitForText('[y] once');
    // Before: "a" answered "always".
    repl.tmux.type('an you also check it');
    repl.tmux.press('Enter');
    await repl.waitForText('steering: can you also check it');
    expect(repl.screen()).not.toMatch(/→ (always|once|deny|never)/);
    repl.tmux.press('n');
    await repl.waitForText('→ deny');
    expect(existsSync(join(folder.workspace, 'made.txt'))).toBe(false);
    repl.submit('/permissions');
    await repl.waitForText('granted this session: (none)');
  });

  it("plan mode's approval: typing on does not approve the plan", async () => {
    const folder = await harness.folder('agent-cli-plan-typing-');
    await writeFile(join(folder.workspace, 'notes.txt'), 'draft\n');
    const repl = await harness.start({
      ...folder,
      script: {
        steps: [
          wait,
          { toolCalls: [{ name: 'exit_plan_mode', arguments: { plan: '1. Add tests' } }] },
          { text: 'What should change in the plan?' },
        ],
      },
      args: ['--mode', 'plan'],
    });
    await repl.waitForPrompt();
    repl.submit('plan the tests');
    await repl.waitForText('sleep');
    repl.tmux.type('please a');
    await repl.waitForText('Approve the plan?');
    await repl.waitForText('[k] keep planning');
    // Before: "d" approved the plan in the default mode.
    repl.tmux.type('dd tests for the parser');
    repl.tmux.press('Enter');
    await repl.waitForText('steering: please add tests for the parser');
    expect(repl.screen()).not.toContain('→ approved');
    repl.tmux.press('k');
    await repl.waitForText('→ keep planning');
    await repl.waitForPrompt(2);
    repl.submit('/mode');
    await repl.waitForText('mode is plan');
  });
});
