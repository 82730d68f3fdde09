// A question about a call a code-mode script made says so: the model wrote the script, the
// script chose the call — the user should know that before answering (an "always" is a grant
// of the whole session). Through the built CLI: the terminal's question (tmux) and stream-json's
// `permission-asked` lines.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type StreamJsonEvent, streamJsonEventSchema } from '../modes/stream-json.js';
import { Harness } from '../testing/repl-harness.js';
import { assertBuilt, runCli, writeScript } from '../testing/test-support.js';

const harness = new Harness();
beforeAll(() => assertBuilt());
afterEach(() => harness.dispose());

/** The model touches `direct` itself, then a script touches `scripted` (and reports). */
const steps = [
  { toolCalls: [{ id: 'direct-call', name: 'bash', arguments: { command: 'touch direct' } }] },
  {
    toolCalls: [
      {
        id: 'script-call',
        name: 'run_script',
        arguments: {
          script: `try { await tools.bash({ command: 'touch scripted' }); return 'made' } catch (e) { return 'refused: ' + e.kind }`,
        },
      },
    ],
  },
  { text: 'done' },
];

describe('a question about a script’s call (tmux)', () => {
  it('says a script asked, which tool and what it runs; the model’s own call does not', async (context) => {
    skipWithout('tmux')(context);
    const folder = await harness.folder('agent-cli-script-asks-');
    const repl = await harness.start({
      ...folder,
      script: { steps },
      args: ['--code-mode', '--mode', 'read-only'],
    });
    await repl.waitForPrompt();
    repl.submit('go');
    // The answer keys are drawn a moment after the question (keys before are not an answer).
    await repl.waitForText('Allow bash: touch direct? [y] once');
    expect(repl.screen()).not.toMatch(/script \(run_script\) asks[^\n]*touch direct/);
    repl.tmux.press('n');
    await repl.waitForText('Allow bash: touch scripted? [y] once');
    expect(repl.screen()).toContain(
      'A script (run_script) asks, not the model directly: Allow bash: touch scripted?',
    );
    repl.tmux.press('n');
    await repl.waitForText('done');
    expect(existsSync(join(folder.workspace, 'direct'))).toBe(false);
    expect(existsSync(join(folder.workspace, 'scripted'))).toBe(false);
  });
});

describe('stream-json', () => {
  it('permission-asked names the script’s tool and call; the model’s own call has neither', async () => {
    const { dir, workspace } = await harness.folder('agent-cli-script-asks-json-');
    const script = await writeScript(dir, steps);
    const run = await runCli(
      [
        ...['--scripted', script, '--cwd', workspace, '-p', 'go', '--code-mode'],
        ...['--mode', 'read-only', '--output-format', 'stream-json'],
      ],
      { cwd: dir },
    );
    const asked = run.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => streamJsonEventSchema.parse(JSON.parse(line)))
      .filter(
        (event): event is Extract<StreamJsonEvent, { type: 'permission-asked' }> =>
          event.type === 'permission-asked',
      );
    expect(
      asked.map((event) => [event.subjects, event.parentToolName, event.parentToolCallId]),
    ).toEqual([
      [['touch direct'], undefined, undefined],
      [['touch scripted'], 'run_script', 'script-call'],
    ]);
  });
});
