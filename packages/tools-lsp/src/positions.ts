import type { Position } from 'vscode-languageserver-protocol';

/** Where in a file, as a model can say it: 1-based line, and a symbol name or a 1-based column. */
export interface SymbolLocator {
  /** 1-based line; without it the symbol's first occurrence in the file is used. */
  line?: number | undefined;
  /** The identifier to point at (its first character is used). */
  symbol?: string | undefined;
  /** 1-based column (UTF-16 code units, as editors count); used when no symbol is given. */
  column?: number | undefined;
  /** Which occurrence of `symbol` on the line (or in the file without a line), 1-based [1]. */
  occurrence?: number | undefined;
}

/** Thrown when a locator does not name a place in the file; the message says why. */
export class LocatorError extends Error {
  override name = 'LocatorError';
}

const identifierCharacter = /[\p{L}\p{N}_$]/u;

/** Start indexes of `symbol` in `text` where it stands as a whole identifier. */
function occurrencesIn(text: string, symbol: string): number[] {
  const found: number[] = [];
  const wordLike =
    identifierCharacter.test(symbol.at(0) ?? '') && identifierCharacter.test(symbol.at(-1) ?? '');
  for (let at = text.indexOf(symbol); at !== -1; at = text.indexOf(symbol, at + 1)) {
    if (wordLike) {
      const before = text[at - 1];
      const after = text[at + symbol.length];
      if (before !== undefined && identifierCharacter.test(before)) continue;
      if (after !== undefined && identifierCharacter.test(after)) continue;
    }
    found.push(at);
  }
  return found;
}

/**
 * The LSP position (0-based line and UTF-16 character) a locator names in `text`. Throws
 * {@link LocatorError} with a message the model can act on (the line's text, how many
 * occurrences exist) when it names nothing.
 */
export function positionOf(text: string, locator: SymbolLocator): Position {
  const lines = text.split(/\r?\n/);
  const occurrence = locator.occurrence ?? 1;
  if (locator.line !== undefined) {
    const lineText = lines[locator.line - 1];
    if (lineText === undefined)
      throw new LocatorError(
        `line ${locator.line} is past the end of the file (${lines.length} lines)`,
      );
    if (locator.symbol !== undefined) {
      const found = occurrencesIn(lineText, locator.symbol);
      const at = found[occurrence - 1];
      if (at === undefined) {
        throw new LocatorError(
          found.length === 0
            ? `"${locator.symbol}" does not occur on line ${locator.line}: ${JSON.stringify(lineText.trim())}`
            : `"${locator.symbol}" occurs ${found.length} time${found.length === 1 ? '' : 's'} on line ${locator.line}, not ${occurrence}`,
        );
      }
      return { line: locator.line - 1, character: at };
    }
    if (locator.column !== undefined) {
      if (locator.column - 1 > lineText.length)
        throw new LocatorError(
          `column ${locator.column} is past the end of line ${locator.line} (${lineText.length} characters)`,
        );
      return { line: locator.line - 1, character: locator.column - 1 };
    }
    throw new LocatorError('give "symbol" (the name to look up) or "column" with "line"');
  }
  if (locator.symbol === undefined)
    throw new LocatorError('give "symbol", or "line" with "symbol" or "column"');
  let seen = 0;
  for (const [index, lineText] of lines.entries()) {
    for (const at of occurrencesIn(lineText, locator.symbol)) {
      seen += 1;
      if (seen === occurrence) return { line: index, character: at };
    }
  }
  throw new LocatorError(
    seen === 0
      ? `"${locator.symbol}" does not occur in the file`
      : `"${locator.symbol}" occurs ${seen} time${seen === 1 ? '' : 's'} in the file, not ${occurrence}`,
  );
}
