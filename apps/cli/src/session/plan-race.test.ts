// Plan questions racing the user's typing (tmux): after "keep planning" the user types what to
// change, and a second plan question — a second exit_plan_mode call in the same batch, or the
// model's very next step — took the first letter typed (the `a` of "add tests first") as its
// answer and switched the session to workspace-write with a plan nobody read.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { Harness } from '../testing/repl-harness.js';
import { assertBuilt, screenWaitOptions } from '../testing/test-support.js';

const harness = new Harness();
beforeAll(() => assertBuilt());
beforeEach(skipWithout('tmux'));
afterEach(() => harness.dispose());

const first = { name: 'exit_plan_mode', arguments: { plan: '1. Read notes.txt' } };
const second = { name: 'exit_plan_mode', arguments: { plan: '1. Delete notes.txt' } };

const variants: { name: string; steps: unknown[] }[] = [
  { name: 'a second call in the same batch', steps: [{ toolCalls: [first, second] }] },
  {
    name: "the model's next step",
    steps: [{ toolCalls: [first] }, { toolCalls: [second] }],
  },
  {
    name: 'a later step after other reads',
    steps: [
      { toolCalls: [first] },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
      { toolCalls: [second] },
    ],
  },
];

/** The screen's non-empty lines, trimmed at the end. */
function lines(screen: string): string[] {
  return screen
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line !== '');
}

describe('a plan question after "keep planning" (tmux)', () => {
  it.each(variants)('is not asked in the same run: $name', async ({ steps }) => {
    const folder = await harness.folder('agent-cli-plan-race-');
    await writeFile(join(folder.workspace, 'notes.txt'), 'draft\n');
    const repl = await harness.start({
      ...folder,
      script: { steps: [...steps, { text: 'Revised.' }] },
      args: ['--mode', 'plan'],
    });
    await repl.waitForPrompt();
    repl.submit('plan the notes');
    // The answer keys are drawn a moment after the question (keys before are not an answer).
    await repl.waitForText('[k] keep planning');
    repl.tmux.press('k');
    // Either the run ended (the prompt is back) or a second question is up: the user now types.
    const settled = () =>
      vi.waitFor(() => {
        const last = lines(repl.screen()).at(-1) ?? '';
        expect(last === '>' || last.includes('Approve the plan?')).toBe(true);
      }, screenWaitOptions);
    await vi.waitFor(
      () => expect(repl.screen().split('→ keep planning').length - 1).toBe(1),
      screenWaitOptions,
    );
    await settled();
    repl.submit('add tests first');
    await vi.waitFor(
      () =>
        expect(repl.screen()).toMatch(
          /Revised\.|(→ approved|add tests first[\s\S]*Approve the plan\?)/,
        ),
      screenWaitOptions,
    );
    const screen = repl.screen();
    // What the user typed reached the model as their message; no letter of it answered a question.
    expect(screen).not.toContain('→ approved');
    expect(screen).toContain('> add tests first');
    if (!screen.includes('Revised.')) {
      // A plan presented in the run their message started is a fair question: answered here.
      expect(screen.lastIndexOf('Approve the plan?')).toBeGreaterThan(
        screen.indexOf('> add tests first'),
      );
      await vi.waitFor(
        () => expect(repl.screen().split('[k] keep planning').length - 1).toBeGreaterThanOrEqual(2),
        screenWaitOptions,
      );
      repl.tmux.press('k');
    }
    await vi.waitFor(() => expect(lines(repl.screen()).at(-1)).toBe('>'), screenWaitOptions);
    repl.submit('/mode');
    await repl.waitForText('mode is plan');
    expect(await readFile(join(folder.workspace, 'notes.txt'), 'utf8')).toBe('draft\n');
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });
});
