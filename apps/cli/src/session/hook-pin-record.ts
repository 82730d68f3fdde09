/**
 * The project files a hook runs, as a session found them changed — kept in `$AGENT_HOME` (hidden
 * from every sandbox) so that the next session does not take them for the user's. Pins are taken
 * when a session starts (hook-file-pins.ts): a sandboxed command that rewrote a hook's script was
 * refused for the rest of its session, but the next session pinned the rewritten script and ran
 * it — outside the sandbox, or as the guard whose `allow` lets a call leave it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setOwnProperty } from '@agent/core';

/** What a session found: per hook command, the pins (digests as one text) seen changed. */
interface Recorded {
  projectRoot: string;
  changed: Record<string, string[]>;
}

/** The record of one project's hooks in `home`. */
export class HookPinRecord {
  /** The record's file (removing it lets the hooks run as their files are). */
  readonly file: string;
  readonly #projectRoot: string;
  #changed: Record<string, string[]>;

  constructor(home: string, projectRoot: string) {
    const key = createHash('sha256').update(projectRoot).digest('hex').slice(0, 32);
    this.file = join(home, 'hook-pins', `${key}.json`);
    this.#projectRoot = projectRoot;
    this.#changed = readRecorded(this.file, projectRoot);
  }

  /** Whether a session found `command`'s files changed to exactly `pin`. */
  has(command: string, pin: string): boolean {
    return Object.hasOwn(this.#changed, command) && (this.#changed[command] ?? []).includes(pin);
  }

  /** Remembers that `command`'s files were found changed to `pin` (best effort: a read-only home keeps nothing). */
  add(command: string, pin: string): void {
    if (this.has(command, pin)) return;
    const kept = Object.hasOwn(this.#changed, command) ? (this.#changed[command] ?? []) : [];
    this.#changed = { ...this.#changed, [command]: [...kept, pin].slice(-16) };
    const recorded: Recorded = { projectRoot: this.#projectRoot, changed: this.#changed };
    const temporary = `${this.file}.${randomBytes(6).toString('hex')}`;
    try {
      mkdirSync(join(this.file, '..'), { recursive: true, mode: 0o700 });
      writeFileSync(temporary, JSON.stringify(recorded), { mode: 0o600 });
      renameSync(temporary, this.file);
    } catch {
      rmSync(temporary, { force: true });
    }
  }
}

function readRecorded(file: string, projectRoot: string): Record<string, string[]> {
  try {
    const recorded = JSON.parse(readFileSync(file, 'utf8')) as Partial<Recorded>;
    if (recorded.projectRoot !== projectRoot || typeof recorded.changed !== 'object') return {};
    const changed: Record<string, string[]> = {};
    // Defined, not assigned: a hook command may be any text, `__proto__` too.
    for (const [command, pins] of Object.entries(recorded.changed ?? {}))
      if (Array.isArray(pins))
        setOwnProperty(
          changed,
          command,
          pins.filter((pin) => typeof pin === 'string'),
        );
    return changed;
  } catch {
    return {};
  }
}
