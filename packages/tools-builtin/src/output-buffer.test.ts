import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { OutputBuffer, removeStaleSpillFiles } from './output-buffer.js';
import { makeTempDir } from './test-helpers.js';

let dir: string | undefined;

afterEach(() => {
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('OutputBuffer', () => {
  it('keeps head and tail exactly and spills every byte, for any chunking (property)', async () => {
    dir = makeTempDir();
    const spillDir = path.join(dir, 'spill');
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 0, max: 40 }),
        fc.array(fc.uint8Array({ minLength: 0, maxLength: 90 }), { maxLength: 12 }),
        async (headBytes, tailBytes, chunks) => {
          const buffer = new OutputBuffer({ headBytes, tailBytes, spillDir, name: `p${run++}` });
          for (const chunk of chunks) buffer.write(Buffer.from(chunk));
          await buffer.close();
          const all = Buffer.concat(chunks);
          const snapshot = buffer.snapshot();
          expect(snapshot.totalBytes).toBe(all.length);
          const fits = all.length <= headBytes + tailBytes;
          expect(snapshot.truncated).toBe(!fits);
          if (fits) {
            expect(snapshot.spillPath).toBeUndefined();
            expect(snapshot.text).toBe(all.toString('utf8'));
          } else {
            // Latin-1 bytes round-trip through the file exactly; the text has the ends.
            expect(fs.readFileSync(snapshot.spillPath ?? '')).toEqual(all);
            const ascii = Buffer.from(all.map((byte) => 0x41 + (byte % 26)));
            const asciiBuffer = new OutputBuffer({
              headBytes,
              tailBytes,
              spillDir,
              name: `a${run++}`,
            });
            let at = 0;
            for (const chunk of chunks) {
              asciiBuffer.write(ascii.subarray(at, at + chunk.length));
              at += chunk.length;
            }
            await asciiBuffer.close();
            const text = asciiBuffer.snapshot().text;
            const head = ascii.subarray(0, headBytes).toString();
            const tail = ascii.subarray(ascii.length - tailBytes).toString();
            expect(
              text.startsWith(
                `${head}\n\n[... ${all.length - headBytes - tailBytes} bytes omitted`,
              ),
            ).toBe(true);
            expect(text.endsWith(`...]\n\n${tail}`)).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('caps the spill file at maxSpillBytes but keeps counting and keeps the tail (property)', async () => {
    dir = makeTempDir();
    const spillDir = path.join(dir, 'spill');
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 120 }),
        fc.array(fc.uint8Array({ minLength: 0, maxLength: 90 }), { maxLength: 12 }),
        async (headBytes, tailBytes, maxSpillBytes, chunks) => {
          const ascii = chunks.map((chunk) => Buffer.from(chunk.map((byte) => 0x41 + (byte % 26))));
          const buffer = new OutputBuffer({
            headBytes,
            tailBytes,
            spillDir,
            maxSpillBytes,
            name: `c${run++}`,
          });
          for (const chunk of ascii) buffer.write(chunk);
          await buffer.close();
          const all = Buffer.concat(ascii);
          const snapshot = buffer.snapshot();
          expect(snapshot.totalBytes).toBe(all.length);
          if (all.length <= headBytes + tailBytes) {
            expect(snapshot.spillPath).toBeUndefined();
            return;
          }
          expect(snapshot.text.endsWith(`...]\n\n${all.subarray(all.length - tailBytes)}`)).toBe(
            true,
          );
          if (maxSpillBytes === 0) {
            expect(snapshot.spillPath).toBeUndefined();
            expect(snapshot.text).toContain('maxSpillBytes is 0');
            return;
          }
          const saved = fs.readFileSync(snapshot.spillPath ?? '');
          expect(saved).toEqual(all.subarray(0, Math.min(all.length, maxSpillBytes)));
          expect(snapshot.spillBytes).toBe(saved.length);
          expect(snapshot.spillCapped === true).toBe(all.length > maxSpillBytes);
          if (all.length > maxSpillBytes) {
            expect(snapshot.text).toContain(`only the first ${maxSpillBytes} bytes were saved`);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('copies what it keeps: chunks may be views of one buffer reused at once (property)', async () => {
    dir = makeTempDir();
    const spillDir = path.join(dir, 'spill');
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 0, max: 40 }),
        fc.array(fc.uint8Array({ minLength: 0, maxLength: 90 }), { maxLength: 12 }),
        async (headBytes, tailBytes, chunks) => {
          const buffer = new OutputBuffer({ headBytes, tailBytes, spillDir, name: `r${run++}` });
          const shared = Buffer.alloc(90);
          for (const chunk of chunks) {
            shared.set(chunk);
            buffer.write(shared.subarray(0, chunk.length));
            shared.fill(0xff); // What the next read would do to it.
          }
          await buffer.close();
          const all = Buffer.concat(chunks);
          const snapshot = buffer.snapshot();
          if (all.length <= headBytes + tailBytes) {
            expect(snapshot.text).toBe(all.toString('utf8'));
            return;
          }
          expect(fs.readFileSync(snapshot.spillPath ?? '')).toEqual(all);
          expect(buffer.preview(tailBytes)).toBe(
            all.subarray(all.length - tailBytes).toString('utf8'),
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('spills megabytes written in pieces of any size exactly, in order, waiting on drain', async () => {
    dir = makeTempDir();
    const buffer = new OutputBuffer({
      headBytes: 10,
      tailBytes: 10,
      spillDir: path.join(dir, 'spill'),
      name: 'big',
    });
    const expected: Buffer[] = [];
    let seed = 7;
    for (let i = 0; i < 300; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const chunk = Buffer.alloc(seed % 200_000, i % 251);
      expected.push(chunk);
      if (!buffer.write(chunk)) await buffer.drain();
    }
    await buffer.close();
    const all = Buffer.concat(expected);
    const snapshot = buffer.snapshot();
    expect(snapshot.totalBytes).toBe(all.length);
    expect(fs.readFileSync(snapshot.spillPath ?? '').equals(all)).toBe(true);
    expect(snapshot.spillError).toBeUndefined();
  });

  it('says so when the spill file cannot be created, and keeps head and tail', async () => {
    dir = makeTempDir();
    const notADirectory = path.join(dir, 'file');
    fs.writeFileSync(notADirectory, '');
    const buffer = new OutputBuffer({
      headBytes: 3,
      tailBytes: 3,
      spillDir: notADirectory,
      name: 'x',
    });
    buffer.write(Buffer.from('abcdefghij'));
    await buffer.close();
    const snapshot = buffer.snapshot();
    expect(snapshot.spillPath).toBeUndefined();
    expect(snapshot.text).toMatch(
      /^abc\n\n\[\.\.\. 4 bytes omitted of 10; full output could not be saved: .+ \.\.\.\]\n\nhij$/,
    );
  });

  it('removes stale spill files only (bash-*.log older than the age), and never throws', async () => {
    dir = makeTempDir();
    const now = Date.now();
    const hour = 60 * 60 * 1000;
    const make = (name: string, ageMs: number) => {
      const file = path.join(dir ?? '', name);
      fs.writeFileSync(file, 'x');
      fs.utimesSync(file, (now - ageMs) / 1000, (now - ageMs) / 1000);
      return file;
    };
    const old = make('bash-1a2b-stdout-abc.log', 48 * hour);
    const fresh = make('bash-3c4d-stderr-abc.log', 2 * hour);
    const other = make('notes.txt', 48 * hour);
    fs.mkdirSync(path.join(dir, 'bash-dir.log'));
    expect(await removeStaleSpillFiles(dir, 24 * hour, now)).toBe(1);
    expect(fs.existsSync(old)).toBe(false);
    expect(fs.existsSync(fresh)).toBe(true);
    expect(fs.existsSync(other)).toBe(true);
    expect(fs.existsSync(path.join(dir, 'bash-dir.log'))).toBe(true);
    expect(await removeStaleSpillFiles(dir, hour, now)).toBe(1);
    expect(fs.existsSync(fresh)).toBe(false);
    expect(await removeStaleSpillFiles(path.join(dir, 'missing'), 0, now)).toBe(0);
  });

  it('does not split a UTF-8 character at the head or tail cut', async () => {
    dir = makeTempDir();
    const buffer = new OutputBuffer({ headBytes: 4, tailBytes: 4, spillDir: dir, name: 'u' });
    // "aé€" = 61 c3a9 e282ac: the head cut falls inside €, the tail cut inside é.
    buffer.write(Buffer.from('aé€ middle aé€', 'utf8'));
    await buffer.close();
    const text = buffer.snapshot().text;
    expect(text).not.toContain('\uFFFD');
    expect(text.startsWith('aé\n\n[...')).toBe(true);
    expect(text.endsWith('...]\n\n€')).toBe(true);
  });
});
