// What the REPL lists: the banner's tool count is the number of tools offered, and /tools cuts
// long descriptions between words. In a real terminal (tmux).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { defaultTools } from '@agent/tools-builtin';
import fc from 'fast-check';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
  cliPath,
  screenWaitOptions,
  TmuxSession,
  tempDir,
  writeScript,
} from '../testing/test-support.js';
import { clipAtWord } from './repl.js';

const cleanups: (() => Promise<void> | void)[] = [];
beforeAll(() => {
  assertBuilt();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('clipAtWord', () => {
  it('never cuts inside a word, fits the width, and keeps short lines whole', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z]{1,12}[,.]?$/), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 10, max: 120 }),
        (words, width) => {
          const text = words.join(' ');
          const clipped = clipAtWord(`${text}\nsecond line`, width);
          if (text.length <= width) {
            expect(clipped).toBe(text);
            return;
          }
          expect(clipped.endsWith('…')).toBe(true);
          expect(clipped.length).toBeLessThanOrEqual(width);
          const head = clipped.slice(0, -1);
          expect(text.startsWith(head)).toBe(true);
          // What follows the head in the text is the end of a word: punctuation or a space.
          if (head.length > 0 && words[0] !== undefined && words[0].length < width)
            expect(text.slice(head.length)).toMatch(/^[\s,.]/);
        },
      ),
    );
    expect(clipAtWord('one two three', 9)).toBe('one two…');
    expect(clipAtWord('Supercalifragilistic', 6)).toBe('Super…');
    expect(clipAtWord('short', 50)).toBe('short');
  });
});

describe('the REPL lists (tmux)', () => {
  beforeEach(skipWithout('tmux'));
  it('the banner counts every tool offered; /tools lists as many, each cut between words', async () => {
    const dir = await tempDir('agent-cli-listing-');
    cleanups.push(dir.dispose);
    const workspace = join(dir.path, 'ws');
    await mkdir(workspace);
    const script = await writeScript(dir.path, [{ text: 'ok' }]);
    const tmux = TmuxSession.start(
      [process.execPath, cliPath, '--scripted', script, '--cwd', workspace],
      {
        cwd: dir.path,
        env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }),
      },
    );
    cleanups.push(() => tmux.kill());
    const waitFor = (check: (screen: string) => boolean) =>
      vi.waitFor(() => expect(check(tmux.capture())).toBe(true), screenWaitOptions);
    await waitFor((screen) => screen.trimEnd().endsWith('>'));
    const banner = /tools \((\d+)\): (.*)/.exec(tmux.capture());
    expect(banner).not.toBeNull();
    const total = Number(banner?.[1]);
    // Each source's own count adds up to the total.
    const counts = [...(banner?.[2] ?? '').matchAll(/\((\d+)(?: tool)?[),]/g)].map((m) =>
      Number(m[1]),
    );
    expect(counts.reduce((sum, count) => sum + count, 0)).toBe(total);
    tmux.type('/tools');
    tmux.press('Enter');
    await waitFor((screen) => /config_set — .*\n>\s*$/.test(screen));
    const screen = tmux.capture();
    const listing = screen.slice(screen.lastIndexOf('> /tools') + '> /tools'.length).split('\n');
    const lines = listing.filter((line) => / — /.test(line));
    expect(lines).toHaveLength(total);
    const descriptions = new Map(
      defaultTools({ cwd: workspace }).map((tool) => [
        tool.name,
        tool.description.split('\n')[0] ?? '',
      ]),
    );
    let clipped = 0;
    for (const line of lines) {
      expect(line.length).toBeLessThanOrEqual(200);
      const [name = '', shown = ''] = line.split(' — ');
      const full = descriptions.get(name);
      if (full === undefined || !shown.endsWith('…')) continue;
      clipped += 1;
      const head = shown.slice(0, -1);
      expect(full.startsWith(head)).toBe(true);
      expect(full.slice(head.length)).toMatch(/^[\s,.;:(—-]/);
    }
    expect(clipped).toBeGreaterThan(3);
  });
});
