import { describe, expect, it } from 'vitest';
import { LocatorError, positionOf } from './positions.js';

const text = 'const address = add(1, 2);\r\nconst sum = add(add(1, 2), 3);\n$x = add;\n';

describe('positionOf', () => {
  it('finds a symbol as a whole identifier on the line, 0-based for LSP', () => {
    // `add` inside `address` does not count.
    expect(positionOf(text, { line: 1, symbol: 'add' })).toEqual({ line: 0, character: 16 });
    expect(positionOf(text, { line: 2, symbol: 'add', occurrence: 2 })).toEqual({
      line: 1,
      character: 16,
    });
    expect(positionOf(text, { line: 3, symbol: '$x' })).toEqual({ line: 2, character: 0 });
  });

  it('without a line, counts occurrences through the file', () => {
    expect(positionOf(text, { symbol: 'add' })).toEqual({ line: 0, character: 16 });
    expect(positionOf(text, { symbol: 'add', occurrence: 4 })).toEqual({ line: 2, character: 5 });
  });

  it('takes a 1-based column', () => {
    expect(positionOf(text, { line: 2, column: 7 })).toEqual({ line: 1, character: 6 });
  });

  it.each([
    [{ line: 9, symbol: 'add' }, 'line 9 is past the end of the file (4 lines)'],
    [{ line: 1, symbol: 'nope' }, '"nope" does not occur on line 1: "const address = add(1, 2);"'],
    [{ line: 2, symbol: 'add', occurrence: 3 }, '"add" occurs 2 times on line 2, not 3'],
    [{ symbol: 'add', occurrence: 9 }, '"add" occurs 4 times in the file, not 9'],
    [{ line: 1, column: 40 }, 'column 40 is past the end of line 1 (26 characters)'],
    [{ line: 1 }, 'give "symbol" (the name to look up) or "column" with "line"'],
    [{}, 'give "symbol", or "line" with "symbol" or "column"'],
  ])('explains why %j names nothing', (locator, message) => {
    expect(() => positionOf(text, locator)).toThrow(new LocatorError(message));
  });
});
