// Plan mode in a real terminal (tmux): read-only tools run, changes are refused, the plan is
// approved with the mode to go on in, and the same run carries it out; -p prints the plan and stops.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Harness } from '../testing/repl-harness.js';
import { assertBuilt, runCli } from '../testing/test-support.js';
import { planModeNote } from './plan-mode.js';

const harness = new Harness();
beforeAll(() => assertBuilt());
beforeEach(skipWithout('tmux'));
afterEach(() => harness.dispose());

const plan = '1. Replace "draft" with "final" in notes.txt\n2. Read it back';
const change = { name: 'write_file', arguments: { path: 'notes.txt', content: 'final\n' } };
const steps = [
  // Exploring: the read runs, the change is refused.
  { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }, change] },
  { text: 'Here is my plan.', toolCalls: [{ name: 'exit_plan_mode', arguments: { plan } }] },
  { toolCalls: [change] },
  { text: 'Plan carried out.' },
];

async function planSession(prefix: string, extraSteps: unknown[] = []) {
  const folder = await harness.folder(prefix);
  await writeFile(join(folder.workspace, 'notes.txt'), 'draft\n');
  const save = join(folder.dir, 'conversation.json');
  const repl = await harness.start({
    ...folder,
    script: { steps: [...steps.slice(0, 2), ...extraSteps] },
    args: ['--mode', 'plan', '--save', save],
  });
  await repl.waitForPrompt();
  expect(repl.screen()).toContain('mode plan');
  repl.submit('make the notes final');
  // The answer keys are drawn a moment after the question (keys before are not an answer).
  await repl.waitForText('[k] keep planning');
  const screen = repl.screen();
  expect(screen).toContain('✓ read_file');
  expect(screen).toMatch(
    /✗ write_file \[denied\]: Permission denied: Plan mode: only read-only tools run/,
  );
  expect(screen).toContain(
    '── Plan ──\n1. Replace "draft" with "final" in notes.txt\n2. Read it back\n──────────',
  );
  // Nothing was asked before the plan: the read ran, the write was refused outright.
  expect(screen).not.toContain('Allow ');
  expect(await readFile(join(folder.workspace, 'notes.txt'), 'utf8')).toBe('draft\n');
  return { ...folder, repl, save };
}

describe('plan mode (tmux)', () => {
  it('explores read-only, the plan is approved with a mode, and the same run carries it out', async () => {
    const session = await planSession('agent-cli-plan-', steps.slice(2));
    const { repl } = session;
    repl.tmux.press('a');
    await repl.waitForText('Plan carried out.');
    expect(repl.screen()).toContain('→ approved; mode workspace-write');
    // The write ran without a question: the approved mode covers it.
    expect(repl.screen()).not.toContain('Allow write_file');
    expect(await readFile(join(session.workspace, 'notes.txt'), 'utf8')).toBe('final\n');
    await repl.waitForPrompt(2);
    repl.submit('/mode');
    await repl.waitForText('mode is workspace-write');
    // The prompt went out with the plan-mode note.
    const saved = JSON.parse(await readFile(session.save, 'utf8')) as {
      messages: { role: string; content: unknown }[];
    };
    expect(saved.messages[0]?.content).toBe(`${planModeNote}\n\nmake the notes final`);
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });

  it('"keep planning" stays in plan mode and ends the run for the user to say what to change', async () => {
    const session = await planSession('agent-cli-plan-keep-', [
      { text: 'What should change in the plan?' },
    ]);
    const { repl } = session;
    repl.tmux.press('k');
    await repl.waitForPrompt(2);
    expect(repl.screen()).toContain('→ keep planning');
    // The model does not go on (with another question racing the user's typing): the run ended.
    expect(repl.screen()).not.toContain('What should change in the plan?');
    repl.submit('/mode');
    await repl.waitForText('mode is plan');
    expect(await readFile(join(session.workspace, 'notes.txt'), 'utf8')).toBe('draft\n');
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });
});

describe('plan mode in -p', () => {
  it('prints the plan on stdout and stops there', async () => {
    const folder = await harness.folder('agent-cli-plan-p-');
    await writeFile(join(folder.workspace, 'notes.txt'), 'draft\n');
    const script = join(folder.dir, 'script.json');
    // A step after the plan would change the file: it must never be reached.
    await writeFile(script, JSON.stringify({ steps }));
    const result = await runCli([
      '--scripted',
      script,
      '--cwd',
      folder.workspace,
      '--mode',
      'plan',
      '-p',
      'make the notes final',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout.startsWith(`${plan}\n`)).toBe(true);
    expect(result.stderr).toMatch(/✗ write_file \[denied\]: Permission denied: Plan mode/);
    expect(await readFile(join(folder.workspace, 'notes.txt'), 'utf8')).toBe('draft\n');
    expect(existsSync(join(folder.workspace, 'notes.txt'))).toBe(true);
  });
});
