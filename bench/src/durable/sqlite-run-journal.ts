/**
 * The embedded journal written on node:sqlite, for the durable-runs bench only: the candidate we
 * measured `FileRunJournal` (fsync'd JSON Lines) against. One row per step; WAL with
 * `synchronous = FULL`, so each committed step is on disk, as the file journal's are.
 */
import { DatabaseSync } from 'node:sqlite';
import { type RunJournal, type RunStep, runStepKey, type StepAttempt } from '@agent/core';

export class SqliteRunJournal implements RunJournal {
  readonly #db: DatabaseSync;
  readonly #select;
  readonly #start;
  readonly #record;

  constructor(path: string) {
    this.#db = new DatabaseSync(path);
    this.#db.exec(
      'PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; ' +
        'CREATE TABLE IF NOT EXISTS steps (run TEXT NOT NULL, key TEXT NOT NULL, started INTEGER, value TEXT, PRIMARY KEY (run, key))',
    );
    this.#select = this.#db.prepare('SELECT started, value FROM steps WHERE run = ? AND key = ?');
    this.#start = this.#db.prepare(
      'INSERT INTO steps (run, key, started) VALUES (?, ?, 1) ON CONFLICT DO NOTHING',
    );
    this.#record = this.#db.prepare(
      'INSERT INTO steps (run, key, value) VALUES (?, ?, ?) ON CONFLICT (run, key) DO UPDATE SET value = excluded.value',
    );
  }

  async step<T>(
    step: RunStep,
    run: (attempt: StepAttempt) => Promise<T | undefined>,
  ): Promise<T | undefined> {
    const key = runStepKey(step);
    const row = this.#select.get(step.runId, key) as
      | { started: number | null; value: string | null }
      | undefined;
    if (row?.value != null) return JSON.parse(row.value) as T;
    const interrupted = row?.started === 1;
    if (step.type === 'tool-result' && !interrupted) this.#start.run(step.runId, key);
    const value = await run({ interrupted });
    if (value !== undefined) this.#record.run(step.runId, key, JSON.stringify(value));
    return value;
  }

  close(): void {
    this.#db.close();
  }
}
