// A journal that cannot store a step because of a limit it was configured with ends the run with
// its own message — the limit and how to raise it — not as "Internal agent error: …", which is
// kept for the loop's own failures.
import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import { RunLimitError } from './errors.js';
import type { RunJournal, RunStep } from './run-journal.js';
import { createScriptedProvider } from './testing/scripted-provider.js';

/** A journal that runs every step, except that `failing` throws `error`. */
function journal(failing: RunStep['type'], error: unknown): RunJournal {
  return {
    step: async (step, run) => {
      if (step.type === failing) throw error;
      return run({ interrupted: false });
    },
  };
}

async function runWith(failing: RunStep['type'], error: unknown) {
  const agent = new Agent({
    provider: createScriptedProvider([{ text: 'hello' }]),
    model: 'scripted',
    journal: journal(failing, error),
  });
  return agent.run('hi').result;
}

describe('a run stopped by a limit', () => {
  const message =
    'The run-input step is 5000017 bytes of JSON, over the 4194304 a journaled step may hold (maxStepBytes): raise maxStepBytes';

  // (A run-end step that cannot be stored is passed over: the run's messages are whole.)
  it.each(['run-input', 'model-response'] as const)(
    'a RunLimitError from the %s step: its message as the run error, as it is',
    async (step) => {
      const result = await runWith(step, new RunLimitError(message));
      expect(result.stopReason).toBe('error');
      expect(result.error).toBe(message);
    },
  );

  it('one from another copy of the package (the brand, not instanceof) too', async () => {
    const foreign = Object.assign(new Error(message), {
      [Symbol.for('agent.error.RunLimitError')]: true,
    });
    expect((await runWith('run-input', foreign)).error).toBe(message);
  });

  it('any other error is still the loop’s own: "Internal agent error: …"', async () => {
    const result = await runWith('run-input', new Error('something broke'));
    expect(result.stopReason).toBe('error');
    expect(result.error).toBe('Internal agent error: something broke');
  });
});
