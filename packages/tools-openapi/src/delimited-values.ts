// The space-, pipe- and tab-delimited styles (OpenAPI `spaceDelimited`, `pipeDelimited`; Swagger
// 2.0's `tsv`): one parameter whose values are joined by a delimiter that is percent-encoded on the
// wire (`%20`, `%7C`, `%09`) exactly like the same character inside a value, so the server cannot
// tell them apart. OpenAPI 3.1.1 (appendix E) leaves the escape to each API; without one, a value
// holding the delimiter is refused rather than sent as two values the model did not write.
//
// The same holds for `form` not exploded wherever the comma between values and one inside a
// value come out alike: in a form body (the whole value is percent-encoded afterwards) and in a
// query under `allowReserved` (both stay literal).
//
// With `explode: true` these styles are undefined in every OpenAPI 3 version ("n/a" in the style
// examples table); Prism reads them as `form` exploded (`color=blue&color=black`), and so do we:
// each value its own `name=value` pair, which is what `explode` means for every other style.

/** A value the parameter's style cannot carry as written; the model is told so. */
export class UnsendableValueError extends Error {
  override name = 'UnsendableValueError';
}

const delimiterCharacters: Record<string, string> = {
  spaceDelimited: ' ',
  pipeDelimited: '|',
  tabDelimited: '\t',
};

const delimiterNames: Record<string, string> = {
  ',': 'a ","',
  ' ': 'a space',
  '|': 'a "|"',
  '\t': 'a tab',
};

/** The delimiter character of a delimited style not exploded; `undefined` for every other case. */
export function joiningDelimiter(style: string, explode: boolean): string | undefined {
  return explode || !Object.hasOwn(delimiterCharacters, style)
    ? undefined
    : delimiterCharacters[style];
}

/**
 * `texts` joined by `delimiter` after `encodeText`; throws {@link UnsendableValueError} when a
 * text holds the delimiter itself.
 */
export function joinDelimited(
  texts: readonly string[],
  delimiter: string,
  encodeText: (text: string) => string,
): string {
  const inside = texts.find((text) => text.includes(delimiter));
  if (inside !== undefined) {
    const shown = inside.length > 60 ? `${inside.slice(0, 60)}…` : inside;
    throw new UnsendableValueError(
      `${JSON.stringify(shown)} holds ${(Object.hasOwn(delimiterNames, delimiter) ? delimiterNames[delimiter] : undefined) ?? JSON.stringify(delimiter)}, which this parameter's style uses between values (the server would read more values than were given); leave it out or split the value`,
    );
  }
  return texts.map(encodeText).join(encodeText(delimiter));
}
