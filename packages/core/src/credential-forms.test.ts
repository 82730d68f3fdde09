import { describe, expect, it } from 'vitest';
import { credentialRedactor } from './credential-environment.js';

// The spellings a key takes in a command's output without anyone hiding it on purpose (colour,
// wrapping, escaping, encoding), and a few a hostile model would try (reversed, hex).

const key = `sk-ant-api03-${'Ab9_'.repeat(12)}Zz+/=`;
const env = { ANTHROPIC_API_KEY: key, PLAIN: 'not a secret at all' };
const marker = '[redacted:ANTHROPIC_API_KEY]';
const encoded = credentialRedactor(env, { forms: 'encoded' });
const exact = credentialRedactor(env);

const bytes = new TextEncoder().encode(key);
const base64 = (prefix: string) => Buffer.from(prefix + key).toString('base64');
const colourEach = (text: string) => [...text].map((c) => `\x1b[01;31m\x1b[K${c}\x1b[m`).join('');

const forms: [string, string][] = [
  ['as it is', key],
  ['grep --color=always around it', `\x1b[01;31m\x1b[K${key}\x1b[m\x1b[K`],
  ['a colour code between every character', colourEach(key)],
  ['an OSC hyperlink inside', `${key.slice(0, 10)}\x1b]8;;https://x\x07${key.slice(10)}`],
  ['JSON text of coloured output', JSON.stringify(colourEach(key)).slice(1, -1)],
  ['wrapped over lines', `${key.slice(0, 20)}\n${key.slice(20, 45)}\r\n${key.slice(45)}`],
  ['wrapped, as JSON text', `${key.slice(0, 30)}\\n${key.slice(30)}`],
  ['zero-width characters between', [...key].join('\u200b')],
  [
    'every character as \\u00hh',
    [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
  ],
  [
    'one character escaped, upper-case hex',
    `\\u0073${key.slice(1, 20)}\\u005F${key.slice(21)}`.replace(
      '\\u005F',
      `\\u00${key.charCodeAt(20).toString(16).toUpperCase()}`,
    ),
  ],
  [
    'double-escaped',
    [...key].map((c) => `\\\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join(''),
  ],
  ['percent-encoded', encodeURIComponent(key)],
  [
    'every character percent-encoded',
    [...key].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join(''),
  ],
  ['HTML entities', [...key].map((c) => `&#${c.charCodeAt(0)};`).join('')],
  ['reversed', [...key].reverse().join('')],
  ['hex', Buffer.from(bytes).toString('hex')],
  ['HEX', Buffer.from(bytes).toString('hex').toUpperCase()],
  [
    'hex as od -An -tx1 writes it',
    Buffer.from(bytes)
      .toString('hex')
      .replace(/../g, ' $&')
      .replace(/(?:.{48})/g, '$&\n'),
  ],
  [
    'hex with colons',
    Buffer.from(bytes)
      .toString('hex')
      .replace(/..(?!$)/g, '$&:'),
  ],
  ['base64', base64('')],
  ['base64 after one byte (KEY=…)', base64('K')],
  ['base64 after two bytes', base64('KY')],
  [
    'base64 of a .env line, wrapped at 76',
    base64(`ANTHROPIC_API_KEY=${key}\n`).replace(/.{76}/g, '$&\n'),
  ],
  ['base64url', base64('').replaceAll('+', '-').replaceAll('/', '_')],
  [
    'inside a Basic header',
    `Authorization: Basic ${Buffer.from(`user:${key}`).toString('base64')}`,
  ],
];

describe('credentialRedactor forms: "encoded"', () => {
  it.each(forms)('%s', (_label, form) => {
    const text = `before ${form} after`;
    const redacted = encoded(text);
    expect(redacted).toContain(marker);
    expect(redacted.startsWith('before ')).toBe(true);
    expect(redacted.endsWith(' after')).toBe(true);
    // Nothing long enough to tell the key is left: no 12 characters of any form of it.
    for (const spelling of [key, Buffer.from(bytes).toString('hex'), base64('')])
      for (let at = 0; at + 12 <= spelling.length; at += 6)
        expect(redacted.toLowerCase()).not.toContain(spelling.slice(at, at + 12).toLowerCase());
  });

  it('exact redaction (files, the default) catches only the plain and JSON-escaped value', () => {
    expect(exact(`a ${key} b`)).toBe(`a ${marker} b`);
    expect(exact(base64(''))).toBe(base64(''));
  });

  it('leaves ordinary text alone, and the value of a variable that is no credential', () => {
    const text = `${'x'.repeat(200)} not a secret at all \x1b[31mred\x1b[m %41%42 &#65; \\u0041 ${Buffer.from('hello world, hello').toString('base64')}`;
    expect(encoded(text)).toBe(text);
  });

  it('a marker with $ signs is inserted as it is', () => {
    const redact = credentialRedactor({ $API_KEY$: key }, { forms: 'encoded' });
    expect(redact(base64(''))).toBe('[redacted:$API_KEY$]');
  });

  it('2 MB of near-misses (a coloured key without its last character, repeated) pass unchanged', () => {
    // A backtracking pattern would not finish here (the test's timeout); this one scans once.
    const nearMiss = `${colourEach(key.slice(0, -1))} `;
    const text = nearMiss.repeat(Math.ceil(2_000_000 / nearMiss.length));
    expect(encoded(text)).toBe(text);
  });
});
