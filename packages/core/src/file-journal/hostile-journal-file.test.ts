// A journal file someone else made or changed: it is read back and believed (finished calls are
// not run again), truncated and emptied where it is — so one that is not the user's own must be
// refused and moved aside, never followed, believed or hung on.
import { execFileSync } from 'node:child_process';
import {
  chmod,
  chown,
  lstat,
  mkdtemp,
  readdir,
  readFile,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentError } from '../errors.js';
import type { RunStep } from '../run-journal.js';
import { FileRunJournal } from './file-run-journal.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hostile-journal-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const result: RunStep = { type: 'tool-result', runId: 'r1', turn: 1, index: 0, toolCallId: 'c1' };
const recorded = '{"r":"r1","k":"tool-result/1/0/c1","v":{"ok":"planted"}}\n';

async function refusal(path: string): Promise<unknown> {
  return FileRunJournal.open(path).then(
    async (journal) => {
      await journal.close();
      return undefined;
    },
    (caught: unknown) => caught,
  );
}

/** Opens with openOrSetAside, runs one step and empties the journal, as the CLI does. */
async function useAsTheCliDoes(path: string): Promise<{ notices: string[]; value: unknown }> {
  const notices: string[] = [];
  const journal = await FileRunJournal.openOrSetAside(path, {
    onDamaged: (line) => notices.push(line),
  });
  const value = await journal.step(result, async () => ({ ok: 'ran' }));
  await journal.clear();
  await journal.close();
  return { notices, value };
}

describe("a journal that is not the user's own", () => {
  it('a symbolic link is not followed: the file it aims at is neither read, truncated nor emptied', async () => {
    const victim = join(dir, 'notes.txt');
    // No newline at its end: read as a journal, all of it is a "torn last line" and cut off.
    await writeFile(victim, 'a file of the user with no newline at its end');
    const path = join(dir, 'journals', 'session.jsonl');
    await FileRunJournal.open(path).then((journal) => journal.close());
    await rm(path);
    await symlink(victim, path);

    const error = await refusal(path);
    expect(AgentError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('symbolic link');
    expect(await readFile(victim, 'utf8')).toBe('a file of the user with no newline at its end');

    const { notices, value } = await useAsTheCliDoes(path);
    expect(value).toEqual({ ok: 'ran' });
    expect(notices[0]).toContain('set aside as');
    expect(await readFile(victim, 'utf8')).toBe('a file of the user with no newline at its end');
    expect((await lstat(path)).isSymbolicLink()).toBe(false);
  });

  it('a journal others may write is not believed (its finished call is not taken as done)', async () => {
    const path = join(dir, 'session.jsonl');
    await writeFile(path, recorded);
    await chmod(path, 0o666);
    const error = await refusal(path);
    expect(AgentError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('may be written by other users (mode 0666)');
    const { notices, value } = await useAsTheCliDoes(path);
    expect(value).toEqual({ ok: 'ran' });
    expect(notices).toHaveLength(1);
    // Nothing lost: the refused file is kept beside it.
    const aside = (await readdir(dir)).find((name) => name.startsWith('session.jsonl.damaged-'));
    expect(aside).toBeDefined();
    expect(await readFile(join(dir, aside ?? ''), 'utf8')).toBe(recorded);
  });

  it('a journal another user owns is not believed', async (context) => {
    if (process.getuid?.() !== 0) {
      // Only root can give a file away; the refusal itself is the same check as the mode's.
      context.skip();
    }
    const path = join(dir, 'session.jsonl');
    await writeFile(path, recorded, { mode: 0o600 });
    await chown(path, 65534, 65534);
    const error = await refusal(path);
    expect(AgentError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('belongs to uid 65534');
    expect((await useAsTheCliDoes(path)).value).toEqual({ ok: 'ran' });
  });

  it("a FIFO in the journal's place is refused, not read for ever", async () => {
    const path = join(dir, 'session.jsonl');
    execFileSync('mkfifo', ['-m', '600', path]);
    const error = await refusal(path);
    expect(AgentError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('is not a regular file');
  });

  it('bytes that are not UTF-8 make the journal damaged (not replayed as U+FFFD), and it is left as it was', async () => {
    const path = join(dir, 'session.jsonl');
    const line1 = Buffer.from('{"r":"r1","k":"run-input","v":{"messages":[]}}\n');
    const line2 = Buffer.concat([
      Buffer.from('{"r":"r1","k":"tool-result/1/0/c1","v":{"ok":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}}\n'),
    ]);
    const torn = Buffer.from('{"r":"r1","k":"tool-');
    await writeFile(path, Buffer.concat([line1, line2, torn]), { mode: 0o600 });
    const error = await refusal(path);
    expect(AgentError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('is damaged at line 2');
    // Refused before anything was cut: the file is as it was.
    expect(await readFile(path)).toEqual(Buffer.concat([line1, line2, torn]));
  });

  it('a torn tail after bytes that are not ASCII is cut at its byte, and the journal appends cleanly', async () => {
    const path = join(dir, 'session.jsonl');
    const line = '{"r":"r1","k":"run-input","v":{"messages":["日本語 ✓"]}}\n';
    await writeFile(path, `${line}{"r":"r1","k":"tool-`, { mode: 0o600 });
    const journal = await FileRunJournal.open(path);
    await journal.step(result, async () => ({ ok: 'ran' }));
    await journal.close();
    const again = await FileRunJournal.open(path);
    expect(again.runs()).toEqual([{ runId: 'r1', steps: 2, finished: false }]);
    await again.close();
  });

  it('a journal from a newer format version is refused, naming it, and kept whole', async () => {
    const path = join(dir, 'session.jsonl');
    const newer = `{"format":2}\n${recorded}{"r":"r1","k":"tool-`;
    await writeFile(path, newer, { mode: 0o600 });
    const error = await refusal(path);
    expect(AgentError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('is in format 2, written by a newer version');
    expect(await readFile(path, 'utf8')).toBe(newer);
    const { value } = await useAsTheCliDoes(path);
    expect(value).toEqual({ ok: 'ran' });
    const aside = (await readdir(dir)).find((name) => name.startsWith('session.jsonl.damaged-'));
    expect(await readFile(join(dir, aside ?? ''), 'utf8')).toBe(newer);
  });

  it('a new journal names its format first; one written before the format line is still read', async () => {
    const path = join(dir, 'session.jsonl');
    const journal = await FileRunJournal.open(path);
    await journal.step(result, async () => ({ ok: 'ran' }));
    await journal.clear();
    await journal.step(result, async () => ({ ok: 'again' }));
    await journal.close();
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines[0]).toBe('{"format":1}');
    expect(lines.filter((text) => text.includes('"format"'))).toHaveLength(1);
    const old = join(dir, 'old.jsonl');
    await writeFile(old, recorded, { mode: 0o600 });
    const reopened = await FileRunJournal.open(old);
    expect(await reopened.step(result, async () => ({ ok: 'ran' }))).toEqual({ ok: 'planted' });
    await reopened.close();
  });
});
