// Where a text stops being JSON. V8's JSON.parse says it ("… in JSON at position 12 (line 1 column
// 13)") for some mistakes only: for a short text it quotes the text instead and gives no place
// ("Unexpected token '/', "/* my settings */ {…" is not valid JSON"), so a comment on the first line
// (VS Code's settings have them), a "# comment" or an unquoted value were said as "it is not valid
// JSON" and nothing more. This scanner follows JSON's grammar (RFC 8259) and returns the offset of
// the first character that does not fit it.

// A run of characters a string holds as they are (no quote, backslash or control character).
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON strings may not hold them raw.
const plain = /[^"\\\u0000-\u001f]*/y;

/** The offset in `text` where it stops being JSON (`text.length`: it ends too soon); undefined if it is JSON. */
export function jsonErrorOffset(text: string): number | undefined {
  let at = 0;
  const fail = (): never => {
    throw new Stop(at);
  };
  const space = () => {
    while (at < text.length && ' \t\n\r'.includes(text.charAt(at))) at += 1;
  };
  const literal = (word: string) => {
    for (const letter of word) {
      if (text.charAt(at) !== letter) fail();
      at += 1;
    }
  };
  const string = () => {
    at += 1; // the opening quote
    for (;;) {
      plain.lastIndex = at;
      plain.test(text);
      at = plain.lastIndex;
      const here = text.charAt(at);
      if (here === '"') {
        at += 1;
        return;
      }
      if (here !== '\\') fail(); // a control character, or the end of the text
      at += 1;
      const escaped = text.charAt(at);
      if (escaped === 'u') {
        for (let digit = 0; digit < 4; digit += 1) {
          at += 1;
          if (!/[0-9a-fA-F]/.test(text.charAt(at))) fail();
        }
      } else if (escaped === '' || !'"\\/bfnrt'.includes(escaped)) fail();
      at += 1;
    }
  };
  const digits = () => {
    if (!/[0-9]/.test(text.charAt(at))) fail();
    while (/[0-9]/.test(text.charAt(at))) at += 1;
  };
  const number = () => {
    if (text.charAt(at) === '-') at += 1;
    if (text.charAt(at) === '0') at += 1;
    else digits();
    if (text.charAt(at) === '.') {
      at += 1;
      digits();
    }
    if (/[eE]/.test(text.charAt(at))) {
      at += 1;
      if (/[+-]/.test(text.charAt(at))) at += 1;
      digits();
    }
  };
  // Nesting is followed with a stack, not recursion: a file of 100,000 "[" must not overflow.
  const closers: string[] = [];
  // Set when a bracket was opened or a comma read: the next item (a member in {}) is due.
  let itemDue = false;
  const value = (): void => {
    space();
    const here = text.charAt(at);
    if (here === '{' || here === '[') {
      at += 1;
      space();
      const closer = here === '{' ? '}' : ']';
      if (text.charAt(at) === closer) {
        at += 1;
        return;
      }
      closers.push(closer);
      itemDue = true;
      return;
    }
    if (here === '"') string();
    else if (here === '-' || /[0-9]/.test(here)) number();
    else if (here === 't') literal('true');
    else if (here === 'f') literal('false');
    else if (here === 'n') literal('null');
    else fail();
  };
  const member = () => {
    space();
    if (text.charAt(at) !== '"') fail();
    string();
    space();
    if (text.charAt(at) !== ':') fail();
    at += 1;
    value();
  };
  try {
    value();
    for (;;) {
      const closer = closers.at(-1);
      if (itemDue) {
        itemDue = false;
        if (closer === '}') member();
        else value();
        continue;
      }
      space();
      if (closer === undefined) break;
      if (text.charAt(at) === ',') {
        at += 1;
        itemDue = true;
      } else if (text.charAt(at) === closer) {
        at += 1;
        closers.pop();
      } else fail();
    }
    space();
    if (at < text.length) fail();
    return undefined;
  } catch (error) {
    if (error instanceof Stop) return Math.min(error.offset, text.length);
    throw error;
  }
}

class Stop {
  constructor(readonly offset: number) {}
}
