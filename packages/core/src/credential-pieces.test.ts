import { describe, expect, it } from 'vitest';
import { credentialRedactor } from './credential-environment.js';

const key =
  'sk-ant-api03-Qw7Rt2Yu9Io4Pa6Sd1Fg8Hj3Kl5Zx0Cv7Bn2Mq4We9Rt6Yu1Io3Pa8Sd5Fg0Hj7Kl2Zx9Cv4Bn6Mq1We8';
const password = 'Sup3rS3cretPw77';
const forTools = credentialRedactor(
  {
    ANTHROPIC_API_KEY: key,
    DATABASE_URL: `postgres://app:${password}@production-database.internal:5432/orders`,
  },
  { forms: 'encoded' },
);
const fileText = `ANTHROPIC_API_KEY=${key}\nOTHER=1\n`;

/** What each command prints for `fileText` (as xxd 2022, util-linux hexdump, GNU od print it). */
function dumps(): [command: string, output: string][] {
  const bytes = Buffer.from(fileText);
  const lines = (width: number) => {
    const rows: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += width) rows.push(bytes.subarray(at, at + width));
    return rows;
  };
  const printable = (row: Buffer) =>
    [...row]
      .map((byte) => (byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : '.'))
      .join('');
  const hex = (row: Buffer) => [...row].map((byte) => byte.toString(16).padStart(2, '0'));
  const xxd = lines(16)
    .map((row, index) => {
      const digits = hex(row);
      const groups: string[] = [];
      for (let at = 0; at < digits.length; at += 2) groups.push(digits.slice(at, at + 2).join(''));
      return `${(index * 16).toString(16).padStart(8, '0')}: ${groups.join(' ').padEnd(39)}  ${printable(row)}`;
    })
    .join('\n');
  const hexdump = lines(16)
    .map((row, index) => {
      const digits = hex(row);
      const halves = `${digits.slice(0, 8).join(' ')}  ${digits.slice(8).join(' ')}`;
      return `${(index * 16).toString(16).padStart(8, '0')}  ${halves.padEnd(48)}  |${printable(row)}|`;
    })
    .join('\n');
  const odChars = lines(16)
    .map(
      (row, index) =>
        `${(index * 16).toString(8).padStart(7, '0')} ${[...row]
          .map((byte) => (byte === 10 ? '\\n' : String.fromCharCode(byte)).padStart(3))
          .join(' ')}`,
    )
    .join('\n');
  const odHex = lines(16)
    .map((row, index) => `${(index * 16).toString(8).padStart(7, '0')} ${hex(row).join(' ')}`)
    .join('\n');
  return [
    ['xxd', xxd],
    ['hexdump -C', hexdump],
    ['od -c', odChars],
    ['od -tx1', odHex],
    [
      'xxd -u (upper-case hex)',
      xxd.replace(/[a-f](?=[0-9a-f]* )/g, (digit) => digit.toUpperCase()),
    ],
    ['cut -c20-60', `${fileText.split('\n')[0]?.slice(19, 60)}\n`],
    [
      'cut, then rev',
      `${[...(fileText.split('\n')[0]?.slice(40, 70) ?? '')].reverse().join('')}\n`,
    ],
    ['fold -w 7 | paste -sd " "', (key.match(/.{1,7}/g) ?? []).join(' ')],
  ];
}

/** Every 8-character stretch of the key past its public prefix, as text (also reversed) and hex. */
function leftovers(text: string): string[] {
  const found: string[] = [];
  const secret = key.slice('sk-ant-api03-'.length);
  const compact = text.replace(/[\s:]/g, '');
  for (let at = 0; at + 8 <= secret.length; at++) {
    const piece = secret.slice(at, at + 8);
    if (compact.includes(piece)) found.push(piece);
    if (compact.includes([...piece].reverse().join(''))) found.push(`reversed ${piece}`);
    const pieceHex = Buffer.from(piece).toString('hex');
    if (compact.toLowerCase().includes(pieceHex)) found.push(`hex ${piece}`);
  }
  return found;
}

describe('a credential shown in pieces by the commands that dump a file', () => {
  it.each(dumps())('%s: no 8 characters of the key in a row are left', (_command, output) => {
    expect(leftovers(output).length, output).toBeGreaterThan(0);
    const redacted = forTools(output);
    expect(redacted).toContain('[redacted:ANTHROPIC_API_KEY]');
    expect(leftovers(redacted), redacted).toEqual([]);
  });

  it('what is around the pieces stays: offsets, the other variable, the line structure', () => {
    const xxd = dumps()[0]?.[1] ?? '';
    const redacted = forTools(xxd);
    expect(redacted.split('\n')).toHaveLength(xxd.split('\n').length);
    expect(redacted).toContain(
      '00000000: 414e 5448 524f 5049 435f 4150 495f 4b45  ANTHROPIC_API_KE',
    );
    expect(redacted).toMatch(/^00000070: 0a4f 5448 4552 3d31 0a +\.OTHER=1\.$/m);
  });

  it("a connection URL's password in pieces is replaced; its host and port are not", () => {
    const text = `password part: ${password.slice(0, 12)}\nhost: production-database.internal:5432/orders`;
    const redacted = forTools(text);
    expect(redacted).toBe(
      'password part: [redacted:DATABASE_URL]\nhost: production-database.internal:5432/orders',
    );
  });
});

describe('a key inside a list (a setting of several parts)', () => {
  const listKey = 'Tq3Vx8Nw1Ry6Bz4Kc9Dm2Fp7';
  const redact = credentialRedactor(
    { DB_OPTIONS: `host=production-database.internal,port=5432,key=${listKey}` },
    { forms: 'encoded' },
  );

  it('its key in pieces is replaced; its other parts, which ordinary output names, are not', () => {
    expect(redact(`key part: ${listKey.slice(4, 18)}`)).toBe('key part: [redacted:DB_OPTIONS]');
    const text = 'connecting to host=production-database.internal,port=5432 as before';
    expect(redact(text)).toBe(text);
  });
});

describe('ordinary output is left as it is', () => {
  it.each([
    ['the public prefix of such keys', 'export ANTHROPIC_API_KEY=sk-ant-api03-xxxx (see the docs)'],
    ['the prefix and 3 characters', 'keys look like sk-ant-api03-Qw7 and go on'],
    ['git log hashes', 'commit 0a4f54484552a3d31e4b7c9d2f1e0a9b8c7d6e5f\nAuthor: A <a@b.c>'],
    [
      'a hex dump of another file',
      '00000000: 2320 6772 6565 7465 720a 0a41 2074 696e  # greeter..A tin\n00000010: 7920 7072 6f6a 6563 742e 0a              y project..',
    ],
    ['words that share short runs with the key', 'Qw7 Rt2 — the ports 5432 and 8080, Kl5Zx0 Bn2'],
    ['the host of a connection URL', 'connected to production-database.internal:5432/orders'],
  ])('%s', (_name, text) => {
    expect(forTools(text)).toBe(text);
  });

  it('an exact redactor (for files) does not look for pieces', () => {
    const exact = credentialRedactor({ ANTHROPIC_API_KEY: key });
    const piece = `${key.slice(20, 50)}\n`;
    expect(exact(piece)).toBe(piece);
  });
});

describe('cost', () => {
  it('stays linear on a text that repeats the pattern of a repetitive value', () => {
    // Every position of such a text starts a piece: growing each one again was quadratic. Not a
    // timing bound (the machine's load would decide it): eight times the text must cost far less
    // than the 64 times a quadratic search takes — in CPU time (the wall clock at a CI's load
    // counts other processes' turns), best of three runs each.
    const repetitive = credentialRedactor(
      { ANTHROPIC_API_KEY: `sk-ant-api03-${'xY9_'.repeat(20)}` },
      { forms: 'encoded' },
    );
    const cost = (repeats: number) => {
      const text = 'xY9_ xY9'.repeat(repeats);
      let best = Number.POSITIVE_INFINITY;
      for (let run = 0; run < 3; run++) {
        const started = process.cpuUsage();
        repetitive(text);
        const spent = process.cpuUsage(started);
        best = Math.min(best, (spent.user + spent.system) / 1000);
      }
      return best;
    };
    cost(2_000);
    const small = cost(5_000);
    const large = cost(40_000);
    expect(large / Math.max(small, 1)).toBeLessThan(24);
  });
});
