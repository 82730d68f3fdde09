import type { AgentStopReason } from './agent-events.js';
import type { AssistantMessage, Message, UserMessage } from './messages.js';
import type { RunJournal, RunStep, RunStepValues, StepAttempt } from './run-journal.js';

// The loop's view of its journal: one method per kind of step, each running the live work only
// when the journal has no record of it. Without a journal every step simply runs live.

/** The steps of one run, through its journal when the agent has one. */
export class RunSteps {
  constructor(
    readonly journal: RunJournal | undefined,
    readonly runId: string,
  ) {}

  /** A typed step: the recorded value, or `live`'s (recorded before it is returned). */
  step<K extends RunStep['type']>(
    step: Extract<RunStep, { type: K }>,
    live: (attempt: StepAttempt) => Promise<RunStepValues[K] | undefined>,
  ): Promise<RunStepValues[K] | undefined> {
    if (this.journal === undefined) return live({ interrupted: false });
    return this.journal.step<RunStepValues[K]>(step, live);
  }

  /** The messages the run starts with: recorded ones on resume, else `live`'s. */
  async input(live: () => Message[]): Promise<Message[]> {
    const value = await this.step({ type: 'run-input', runId: this.runId }, async () => ({
      messages: live(),
    }));
    return value?.messages ?? [];
  }

  /**
   * The model's response for `turn` (with the compactions made before it), and whether it came
   * from the journal (no model call).
   */
  async modelResponse(
    turn: number,
    live: () => Promise<RunStepValues['model-response']>,
  ): Promise<RunStepValues['model-response'] & { replayed: boolean }> {
    let replayed = true;
    const value = await this.step({ type: 'model-response', runId: this.runId, turn }, () => {
      replayed = false;
      return live();
    });
    // Unreachable (a model step always records a message); kept so a bad journal cannot crash the loop.
    if (value === undefined) return { ...(await live()), replayed: false };
    return { ...value, replayed };
  }

  /**
   * The last paused turn recorded for `turn` and its `part` (none without a journal, or when the
   * turn never paused). Asking records nothing: a checkpoint is written only by
   * {@link RunSteps.recordPausedTurn}.
   */
  async pausedTurn(turn: number): Promise<{ message: AssistantMessage; part: number } | undefined> {
    if (this.journal === undefined) return undefined;
    let found: { message: AssistantMessage; part: number } | undefined;
    for (let part = 1; ; part++) {
      const value = await this.step(
        { type: 'model-checkpoint', runId: this.runId, turn, part },
        async () => undefined,
      );
      if (value === undefined) return found;
      found = { message: value.message, part };
    }
  }

  /** Records the turn as it stood when the API paused it for the `part`-th time. */
  async recordPausedTurn(turn: number, part: number, message: AssistantMessage): Promise<void> {
    if (this.journal === undefined) return;
    await this.step({ type: 'model-checkpoint', runId: this.runId, turn, part }, async () => ({
      message,
    }));
  }

  /** The queued messages the run takes in at this point (`live` drains the queue; none: nothing recorded). */
  async queuedMessages(
    turn: number,
    point: 'after-tools' | 'before-stop',
    live: () => UserMessage[],
  ): Promise<UserMessage[]> {
    if (this.journal === undefined) return live();
    const value = await this.step(
      { type: 'queued-messages', runId: this.runId, turn, point },
      async () => {
        const messages = live();
        return messages.length === 0 ? undefined : { messages };
      },
    );
    return value?.messages ?? [];
  }

  /** Whether batch `batch` of `turn` is skipped for a steering message (recorded only when it is). */
  async steeringSkip(turn: number, batch: number, live: () => boolean): Promise<boolean> {
    if (this.journal === undefined) return live();
    const value = await this.step(
      { type: 'steering-skip', runId: this.runId, turn, batch },
      async () => (live() ? { skipped: true } : undefined),
    );
    return value?.skipped === true;
  }

  /** Records how the run ended. */
  async end(stopReason: AgentStopReason, error: string | undefined): Promise<void> {
    if (this.journal === undefined) return;
    await this.step({ type: 'run-end', runId: this.runId }, async () =>
      error === undefined ? { stopReason } : { stopReason, error },
    );
  }
}
