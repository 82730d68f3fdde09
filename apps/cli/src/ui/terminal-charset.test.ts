// A terminal whose locale is not UTF-8. Before, the CLI wrote and read UTF-8 whatever the locale:
// in a Latin-1 terminal a typed `é` (the byte 0xE9) reached the model as U+FFFD, and the glyphs
// came out as bytes such a terminal shows as other characters or obeys as C1 controls (the
// spinner's braille is E2 A0 8x: 0x8F is SS3; a `Û`, C3 9B, is `Ã` and then CSI). Under LANG=C,
// tmux and others show `_` for every glyph: `✓ bash` and `✗ bash` looked the same.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
  shellQuoted,
  slowAnswerCommand,
  TmuxSession,
  tempDir,
} from '../testing/test-support.js';
import {
  localeCodeset,
  type TerminalCharset,
  terminalCharset,
  toTerminal,
} from './terminal-charset.js';

const cleanups: (() => void | Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const answer = 'Réponse: Ûber → fin… ✓';

/**
 * The REPL in a terminal (tmux, its output recorded by script(1)) under `locale`: `typed` (text,
 * then raw bytes as hex) sent as a prompt, answered after a wait (the spinner's time), then
 * /exit. The raw bytes written, and the prompt the model was sent (from the saved session).
 */
async function replUnder(
  locale: Record<string, string>,
  typed: { text: string; bytes?: string[] },
): Promise<{ raw: Buffer; prompt: unknown }> {
  const dir = await tempDir('agent-charset-');
  cleanups.push(dir.dispose);
  const raw = join(dir.path, 'raw.txt');
  const saved = join(dir.path, 'conversation.json');
  const agent = [...(await slowAnswerCommand(dir.path, answer, 1200)), '--save', saved];
  const tmux = TmuxSession.start(
    ['script', '-q', '-f', raw, '-c', agent.map(shellQuoted).join(' ')],
    {
      cwd: dir.path,
      env: cleanEnv({ LANG: '', LC_ALL: '', LC_CTYPE: '', TERM: 'xterm-256color', ...locale }),
    },
  );
  cleanups.push(() => tmux.kill());
  await tmux.waitForText('Ctrl-C twice at the prompt');
  tmux.type(typed.text);
  if (typed.bytes !== undefined) tmux.sendBytes(...typed.bytes);
  tmux.press('Enter');
  // The answer's last word, in whatever set it was written.
  await tmux.waitForText('fin');
  tmux.type('/exit');
  tmux.press('Enter');
  expect(await tmux.waitForExit()).toBe(0);
  const { messages } = JSON.parse(readFileSync(saved, 'utf8')) as {
    messages: { role: string; content: unknown }[];
  };
  return { raw: readFileSync(raw), prompt: messages.find((m) => m.role === 'user')?.content };
}

/** The bytes of `raw` in 0x80–0x9F: C1 controls to an ISO-8859 terminal. */
const c1Bytes = (raw: Buffer) => [...raw].filter((byte) => byte >= 0x80 && byte <= 0x9f);

describe('the interactive session in a terminal that is not UTF-8 (tmux)', () => {
  it('ISO-8859-1: a typed é reaches the model as é; the output is Latin-1, no C1 control in it', async (context) => {
    skipWithout('tmux')(context);
    const { raw, prompt } = await replUnder(
      { LANG: 'de_DE.ISO-8859-1' },
      { text: 'caf', bytes: ['e9', '20', '6f', '6b'] },
    );
    expect(JSON.stringify(prompt)).toContain('café ok');
    expect(JSON.stringify(prompt)).not.toContain('\\ufffd');
    expect(c1Bytes(raw)).toEqual([]);
    // The answer as a Latin-1 terminal shows it; the glyphs it lacks in ASCII.
    expect(raw.includes(Buffer.from('R\xe9ponse: \xdbber -> fin... +', 'latin1'))).toBe(true);
    // The spinner was drawn, in ASCII.
    const drawn = raw
      .toString('latin1')
      .split('\r\u001b[K  ')
      .filter((line) => line.includes(' waiting for the model'));
    expect(drawn.length).toBeGreaterThan(0);
    for (const line of drawn) expect('|/-\\').toContain(line[0]);
  });

  it.for([
    ['LANG=C', { LANG: 'C' }],
    ['LC_ALL=POSIX', { LC_ALL: 'POSIX', LANG: 'en_US.UTF-8' }],
  ] as [string, Record<string, string>][])(
    '%s: the CLI’s glyphs in ASCII, typed UTF-8 kept',
    async ([, locale], context) => {
      skipWithout('tmux')(context);
      const { raw, prompt } = await replUnder(locale, { text: 'naïve ok' });
      expect(JSON.stringify(prompt)).toContain('naïve ok');
      const text = raw.toString('utf8');
      expect(text).toContain('-> fin... +');
      for (const glyph of ['→', '…', '✓', '—', '⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'])
        expect(text).not.toContain(glyph);
    },
  );

  it('a UTF-8 locale: unchanged (the control)', async (context) => {
    skipWithout('tmux')(context);
    const { raw, prompt } = await replUnder({ LANG: 'C.UTF-8' }, { text: 'naïve ok' });
    expect(JSON.stringify(prompt)).toContain('naïve ok');
    expect(raw.toString('utf8')).toContain(answer);
  });
});

describe('terminalCharset', () => {
  it.each([
    [{}, undefined],
    [{ LANG: 'en_US.UTF-8' }, 'utf-8'],
    [{ LANG: 'C.utf8' }, 'utf-8'],
    [{ LANG: 'C' }, 'ascii'],
    [{ LC_ALL: 'POSIX', LANG: 'en_US.UTF-8' }, 'ascii'],
    [{ LC_CTYPE: 'de_DE.UTF-8', LANG: 'C' }, 'utf-8'],
    [{ LANG: 'de_DE.ISO-8859-1' }, 'iso-8859-1'],
    [{ LANG: 'de_DE.iso88591' }, 'iso-8859-1'],
    [{ LANG: 'de_DE@euro' }, 'iso-8859-15'],
    [{ LANG: 'ru_RU.KOI8-R' }, 'koi8-r'],
    [{ LANG: 'ru_RU.CP1251' }, 'windows-1251'],
    [{ LANG: 'ja_JP.eucJP' }, 'euc-jp'],
    [{ LANG: 'en_US' }, undefined],
  ] as const)('%j: %s', (env, codeset) => {
    expect(localeCodeset(env)).toBe(codeset);
  });

  const latin9 = terminalCharset({ LANG: 'fr_FR.ISO-8859-15' });
  it.each([
    [
      'ISO-8859-15',
      latin9,
      'Prix: 5 € — œuvre ✗',
      Buffer.from([0xa4, 0xbd]),
      'Prix: 5 \xa4 - \xbduvre x',
    ],
    ['KOI8-R', terminalCharset({ LANG: 'ru_RU.KOI8-R' }), 'да → нет', undefined, undefined],
  ] as [string, TerminalCharset, string, Buffer | undefined, string | undefined][])(
    '%s: each character in one byte of the set, never a C1 control',
    (_name, charset, text, includes, latin1) => {
      expect(charset.kind).toBe('single-byte');
      const bytes = toTerminal(text, charset);
      expect(Buffer.isBuffer(bytes)).toBe(true);
      const out = bytes as Buffer;
      if (includes !== undefined)
        for (const byte of includes) expect(out.includes(byte)).toBe(true);
      if (latin1 !== undefined) expect(out.toString('latin1')).toBe(latin1);
      expect(c1Bytes(out)).toEqual([]);
      expect(out.includes(0x3f)).toBe(false);
    },
  );

  it('a character the set lacks is `?`; escape sequences pass', () => {
    const out = toTerminal('\u001b[1m日本\u001b[0m', terminalCharset({ LANG: 'de_DE.ISO-8859-1' }));
    expect(out.toString()).toBe('\u001b[1m??\u001b[0m');
  });
});
