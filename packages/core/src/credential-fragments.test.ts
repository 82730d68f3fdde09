import { describe, expect, it } from 'vitest';
import { credentialRedactor } from './credential-environment.js';

const password = 'Tr0ub4dor-pass-99';
const key = `sk-ant-api03-${'xY9_'.repeat(20)}`;
const redact = credentialRedactor({
  DATABASE_URL: `postgres://alice:${password}@db:5432/app`,
  DB_PASSWORD: password,
  ANTHROPIC_API_KEY: key,
});
const forTools = credentialRedactor({ ANTHROPIC_API_KEY: key }, { forms: 'encoded' });

describe('a credential cut short where the text was cut', () => {
  it.each([
    ['before an ellipsis', `retrying: ${key.slice(0, 30)}… (retry 1)`],
    ['before three dots', `error: Bearer ${key.slice(0, 20)}... more`],
    ['at the end of the text', `Authorization: Bearer ${key.slice(0, 50)}`],
    ['after an ellipsis', `…${key.slice(25)} was sent`],
    ['after three dots', `header ...${key.slice(40)}`],
    ['at the start of the text (the rest of a split write)', `${key.slice(33)}\n`],
  ])('%s: the fragment is the marker', (_name, text) => {
    for (const redacted of [redact(text), forTools(text)]) {
      expect(redacted).toContain('[redacted:ANTHROPIC_API_KEY]');
      expect(redacted).not.toMatch(/xY9_xY9_/);
    }
  });

  it.each([
    [
      'bash',
      (head: string, tail: string) =>
        `${head}\n\n[... 1,200 bytes omitted of 9,000; the whole output is in /tmp/x ...]\n\n${tail}`,
    ],
    [
      'the result budget',
      (head: string, tail: string) => `${head}\n[… 500 of 9000 characters clipped …]\n${tail}`,
    ],
    ['a REPL', (head: string, tail: string) => `${head}\n[… 700 characters cut …]\n${tail}`],
  ])('an omission note of %s cutting through values: both pieces are markers', (_name, note) => {
    const text = note(`output ${key.slice(0, 40)}`, `${key.slice(50)} more output`);
    for (const redacted of [redact(text), forTools(text)]) {
      expect(redacted).not.toMatch(/xY9_xY9_/);
      expect(redacted.match(/\[redacted:ANTHROPIC_API_KEY\]/g)).toHaveLength(2);
    }
  });

  it('a URL whose password was cut by a 160-character line keeps no part of it past the user', () => {
    const line = `connection failed: Request cannot be constructed from a URL that includes credentials: postgres://alice:${password.slice(0, 14)}…`;
    const redacted = redact(line);
    expect(redacted).not.toContain(password.slice(0, 6));
    expect(redacted).toMatch(/\[redacted:(DATABASE_URL|DB_PASSWORD)\]…$/);
  });

  it('a short password loses its fragments of 4 characters and more', () => {
    const short = credentialRedactor({ DB_PASSWORD: 'q7-Zebra!' });
    expect(short('password: q7-Z…')).toBe('password: [redacted:DB_PASSWORD]…');
    expect(short('…ra! was it')).toBe('…ra! was it');
    expect(short('…bra! was it')).toBe('…[redacted:DB_PASSWORD] was it');
    expect(short('…Zebra! was it')).toBe('…[redacted:DB_PASSWORD] was it');
  });

  it('leaves ordinary text alone: fragments too short, or not at a cut, or not of a value', () => {
    const texts = [
      'sk-a… and so on',
      `the key starts ${key.slice(0, 20)} and goes on`,
      'nothing here…',
      '...',
      '',
      'Tr0u',
    ];
    for (const text of texts) expect(redact(text)).toBe(text);
  });

  it('whole values and fragments in one text, each once', () => {
    const text = `${key} then ${key.slice(0, 20)}… and …${password.slice(5)}`;
    expect(redact(text)).toBe(
      '[redacted:ANTHROPIC_API_KEY] then [redacted:ANTHROPIC_API_KEY]… and …[redacted:DB_PASSWORD]',
    );
  });

  it('stays linear on a long text of dots and key starts', () => {
    // A search to the text's end at each cut made this quadratic (20,000 cuts took 4 s). Not a
    // timing bound (the machine's load would decide it): eight times the text must cost far less
    // than the 64 times a quadratic search takes — in CPU time, not wall time (at a CI's load 20
    // the wall clock counted other processes' turns: 41× once, run85), best of five runs each.
    const cost = (cuts: number) => {
      const text = `${key.slice(0, 12)}...`.repeat(cuts);
      let best = Number.POSITIVE_INFINITY;
      for (let run = 0; run < 5; run++) {
        const started = process.cpuUsage();
        redact(text);
        const spent = process.cpuUsage(started);
        best = Math.min(best, (spent.user + spent.system) / 1000);
      }
      return best;
    };
    // Samples of tens and hundreds of milliseconds: at 1,500 cuts (~8 ms) one lucky small sample
    // under a CI's load made a linear 8× look like 72× (run81).
    cost(1_000);
    const small = cost(6_000);
    const large = cost(48_000);
    // Linear measured 6–24× here (allocation and GC grow with the text); a quadratic search 64×.
    expect(large / Math.max(small, 1)).toBeLessThan(40);
  });
});
