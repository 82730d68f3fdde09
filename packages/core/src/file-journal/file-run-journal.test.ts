import { execFile } from 'node:child_process';
import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentError } from '../errors.js';
import type { RunStep } from '../run-journal.js';
import { FileRunJournal } from './file-run-journal.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'file-journal-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const result = (runId: string, toolCallId: string, index = 0): RunStep => ({
  type: 'tool-result',
  runId,
  turn: 1,
  index,
  toolCallId,
});

describe('FileRunJournal', () => {
  it('gives a later process every recorded value, and runs nothing again', async () => {
    const path = join(dir, 'run.jsonl');
    const first = await FileRunJournal.open(path);
    expect(
      await first.step({ type: 'run-input', runId: 'r1' }, async () => ({ messages: [] })),
    ).toEqual({ messages: [] });
    await first.step(result('r1', 'c1'), async () => ({ ok: 1 }));
    await first.step({ type: 'run-end', runId: 'r1' }, async () => ({ stopReason: 'completed' }));
    await first.close();

    const second = await FileRunJournal.open(path);
    const ran: string[] = [];
    const value = await second.step(result('r1', 'c1'), async () => {
      ran.push('c1');
      return { ok: 2 };
    });
    expect(value).toEqual({ ok: 1 });
    expect(ran).toEqual([]);
    expect(second.runs()).toEqual([
      { runId: 'r1', steps: 3, finished: true, stopReason: 'completed' },
    ]);
    await second.close();
  });

  it('tells a later attempt that a call started and never finished', async () => {
    const path = join(dir, 'run.jsonl');
    const first = await FileRunJournal.open(path);
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    // The call never finishes in this "process": only its start is on disk.
    void first.step(result('r1', 'slow'), () => {
      started();
      return new Promise(() => {});
    });
    await running;
    const second = await FileRunJournal.open(path);
    const attempts: boolean[] = [];
    await second.step(result('r1', 'slow'), async (attempt) => {
      attempts.push(attempt.interrupted);
      return { ok: 1 };
    });
    // Other kinds of step record no start: a model call cut off is simply made again.
    await second.step({ type: 'model-response', runId: 'r1', turn: 2 }, async (attempt) => {
      attempts.push(attempt.interrupted);
      return { message: 'm' };
    });
    expect(attempts).toEqual([true, false]);
    await Promise.all([first.close(), second.close()]);
  });

  it('records nothing for undefined, so the step runs again', async () => {
    const path = join(dir, 'run.jsonl');
    const journal = await FileRunJournal.open(path);
    const step: RunStep = { type: 'steering-skip', runId: 'r1', turn: 1, batch: 1 };
    let runs = 0;
    await journal.step(step, async () => {
      runs++;
      return undefined;
    });
    await journal.step(step, async () => {
      runs++;
      return undefined;
    });
    expect(runs).toBe(2);
    await journal.close();
    expect(await readFile(path, 'utf8')).toBe('');
  });

  it('drops a last line cut off mid-write, and appends cleanly after it', async () => {
    const path = join(dir, 'run.jsonl');
    const first = await FileRunJournal.open(path);
    await first.step(result('r1', 'c1'), async () => ({ ok: 1 }));
    await first.close();
    await appendFile(path, '{"r":"r1","k":"tool-result/1/1/c2","v":{"ok"');
    const second = await FileRunJournal.open(path);
    expect(await second.step(result('r1', 'c2', 1), async () => ({ ok: 2 }))).toEqual({ ok: 2 });
    await second.close();
    const third = await FileRunJournal.open(path);
    expect(third.runs()[0]?.steps).toBe(2);
    await third.close();
  });

  it.each([
    ['not JSON', 'not json at all\n'],
    ['no run id', '{"k":"run-end","v":{}}\n'],
    ['neither start nor value', '{"r":"r1","k":"run-end"}\n'],
  ])('refuses a damaged line (%s), naming the file and the line', async (_, damage) => {
    const path = join(dir, 'run.jsonl');
    await writeFile(path, `{"r":"r1","k":"run-input","v":{"messages":[]}}\n${damage}`);
    const error = await FileRunJournal.open(path).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(AgentError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(`${path} is damaged at line 2`);
    const notices: string[] = [];
    const fresh = await FileRunJournal.openOrSetAside(path, {
      onDamaged: (line) => notices.push(line),
    });
    expect(fresh.runs()).toEqual([]);
    await fresh.close();
    expect(notices[0]).toContain('set aside as');
    expect((await readdir(dir)).some((name) => name.startsWith('run.jsonl.damaged-'))).toBe(true);
  });

  it('writes what transform returns (redaction) and replays that, while the live value goes on', async () => {
    const path = join(dir, 'run.jsonl');
    const journal = await FileRunJournal.open(path, {
      transform: (value) => JSON.parse(JSON.stringify(value).replaceAll('s3cr3t', '[redacted]')),
    });
    const live = await journal.step(result('r1', 'c1'), async () => ({ text: 'key s3cr3t' }));
    expect(live).toEqual({ text: 'key s3cr3t' });
    expect(await readFile(path, 'utf8')).not.toContain('s3cr3t');
    expect(await journal.step(result('r1', 'c1'), async () => ({ text: 'again' }))).toEqual({
      text: 'key [redacted]',
    });
    await journal.close();
  });

  it('clear empties the file and forgets the runs', async () => {
    const path = join(dir, 'run.jsonl');
    const journal = await FileRunJournal.open(path);
    await journal.step(result('r1', 'c1'), async () => ({ ok: 1 }));
    await journal.clear();
    expect(journal.runs()).toEqual([]);
    expect(await readFile(path, 'utf8')).toBe('');
    await journal.close();
  });
});

const child = fileURLToPath(new URL('./__fixtures__/journaled-run.mjs', import.meta.url));

interface ChildReport {
  runId: string;
  stopReason: string;
  providerCalls: number;
  results: { id: string; errorKind: string | null }[];
  events: number;
}

/** Runs the child; resolves with its report, or `undefined` when it was killed. */
function runChild(args: string[]): Promise<ChildReport | undefined> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [child, ...args], (error, stdout, stderr) => {
      if (error !== null) {
        if (error.signal === 'SIGKILL') return resolve(undefined);
        return reject(new Error(`${error.message}\n${stderr}`));
      }
      resolve(JSON.parse(stdout) as ChildReport);
    });
  });
}

describe('a real process killed (SIGKILL) at every point of a journaled run, then resumed', () => {
  it('completes every time: finished calls not repeated, running ones reported, no journaled model call paid twice', async () => {
    const full = await runChild([join(dir, 'full.jsonl'), join(dir, 'full.effects'), '-1']);
    expect(full?.stopReason).toBe('completed');
    const events = full?.events ?? 0;
    expect(events).toBeGreaterThan(10);
    const outcomes = new Set<string>();
    for (let killAt = 1; killAt <= events; killAt++) {
      const journalPath = join(dir, `k${killAt}.jsonl`);
      const effectsPath = join(dir, `k${killAt}.effects`);
      await writeFile(effectsPath, '');
      const killed = await runChild([journalPath, effectsPath, String(killAt)]);
      expect(killed, `the child was not killed at event ${killAt}`).toBeUndefined();

      const left = await FileRunJournal.open(journalPath);
      const run = left.runs()[0];
      const journaledModelCalls = (await readFile(journalPath, 'utf8'))
        .split('\n')
        .filter((line) => line.includes('"k":"model-response/') && line.includes('"v":')).length;
      await left.close();
      const resumed = await runChild([
        journalPath,
        effectsPath,
        '-1',
        ...(run === undefined ? [] : [run.runId]),
      ]);
      const where = `killed at event ${killAt}`;
      expect(resumed?.stopReason, where).toBe('completed');
      expect(
        resumed?.results.map((entry) => entry.id),
        where,
      ).toEqual(['a', 'b', 'c', 'd']);
      expect(resumed?.providerCalls, where).toBe(3 - journaledModelCalls);
      const effects = (await readFile(effectsPath, 'utf8')).split('\n').filter(Boolean);
      const count = (line: string) => effects.filter((effect) => effect === line).length;
      for (const entry of resumed?.results ?? []) {
        if (entry.id === 'b') {
          // Read-only: repeated when its process died during it, never reported.
          expect(entry.errorKind, where).toBeNull();
          expect(count('lookup b'), where).toBeGreaterThanOrEqual(1);
          continue;
        }
        const times = count(`charge ${entry.id}`);
        if (entry.errorKind === null) expect(times, where).toBe(1);
        else {
          expect(entry.errorKind, where).toBe('interrupted');
          expect(times, where).toBeLessThanOrEqual(1);
        }
        outcomes.add(`${entry.id}:${entry.errorKind ?? 'ok'}`);
      }
    }
    // The kill points reached both outcomes: some calls were reported, and some finished ones kept.
    expect([...outcomes].some((outcome) => outcome.endsWith(':interrupted'))).toBe(true);
    expect([...outcomes].some((outcome) => outcome.endsWith(':ok'))).toBe(true);
    // Two fresh node processes per kill point, one after another: minutes on a loaded machine.
  }, 600_000);
});
