/**
 * Every session's runs are journaled (DESIGN §5½) in `$AGENT_HOME/journals/<session id>.jsonl`:
 * each model response, approval answer and tool result is on disk before the run moves on. The
 * session file is still written after each run, and records the last run it holds
 * (`lastRunId`); the journal is then emptied. So after a crash (kill -9, power loss) the journal
 * holds exactly the runs the session file lacks, and `--continue` resumes them: finished calls
 * come back from the journal, a call that was running is reported to the model as interrupted
 * (unless its tool is repeatable), a question left unanswered is asked again.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { RunJournal, RunStep, StepAttempt } from '@agent/core';
import { FileRunJournal } from '@agent/core/file-journal';
import { agentHome } from '../config/agent-home.js';
import { redactJson } from '../ui/redaction.js';

/** The journal file of a session. */
export function journalPath(sessionId: string, home = agentHome()): string {
  // An id given on the command line could hold anything: such a name is hashed.
  const name = /^[A-Za-z0-9_-]{1,100}$/.test(sessionId)
    ? sessionId
    : createHash('sha256').update(sessionId).digest('hex').slice(0, 32);
  return join(home, 'journals', `${name}.jsonl`);
}

/** A session's run journal: the file, or nothing when it cannot be kept (runs then simply run). */
export class SessionJournal implements RunJournal {
  readonly #file: FileRunJournal | undefined;

  private constructor(file: FileRunJournal | undefined) {
    this.#file = file;
  }

  /** No journal: runs simply run. */
  static off(): SessionJournal {
    return new SessionJournal(undefined);
  }

  /** Opens the session's journal; a problem is logged and the session goes on without one. */
  static async open(sessionId: string, log: (line: string) => void): Promise<SessionJournal> {
    try {
      const file = await FileRunJournal.openOrSetAside(journalPath(sessionId), {
        // Written like session files: credential values as [redacted:NAME].
        transform: redactJson,
        onDamaged: (message) => log(`warning: ${message}`),
      });
      return new SessionJournal(file);
    } catch (error) {
      log(
        `warning: runs are not journaled, so a crash loses the current run (${error instanceof Error ? error.message : String(error)})`,
      );
      return new SessionJournal(undefined);
    }
  }

  /** Whether runs are journaled. */
  get active(): boolean {
    return this.#file !== undefined;
  }

  step<T>(step: RunStep, run: (attempt: StepAttempt) => Promise<T | undefined>) {
    return this.#file === undefined ? run({ interrupted: false }) : this.#file.step(step, run);
  }

  /**
   * The journaled runs the session file does not hold (those after `lastRunId`), oldest first:
   * each is resumed (an unfinished one) or replayed to its end (one that ended before its save).
   */
  runsToResume(lastRunId: string | undefined): string[] {
    const runs = this.#file?.runs() ?? [];
    const saved = runs.findIndex((run) => run.runId === lastRunId);
    return runs.slice(saved + 1).map((run) => run.runId);
  }

  /** Call after the session file was written: its runs need no journal any more. */
  async saved(): Promise<void> {
    await this.#file?.clear();
  }

  async close(): Promise<void> {
    await this.#file?.close();
  }
}
