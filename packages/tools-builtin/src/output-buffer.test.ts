import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { OutputBuffer } from './output-buffer.js';
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
