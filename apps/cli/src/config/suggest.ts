// "Did you mean …?" for a mistyped option or command, as git, npm and Claude Code (commander) say it.

/** Edits (insert, delete, replace, swap two neighbours) that turn one word into the other. */
export function editDistance(from: string, to: string): number {
  const rows = from.length + 1;
  const columns = to.length + 1;
  const table: number[][] = Array.from({ length: rows }, (_, row) =>
    Array.from({ length: columns }, (_, column) => (row === 0 ? column : column === 0 ? row : 0)),
  );
  const at = (row: number, column: number) => table[row]?.[column] ?? Number.POSITIVE_INFINITY;
  for (let row = 1; row < rows; row++) {
    for (let column = 1; column < columns; column++) {
      const same = from[row - 1] === to[column - 1] ? 0 : 1;
      let best = Math.min(
        at(row - 1, column) + 1,
        at(row, column - 1) + 1,
        at(row - 1, column - 1) + same,
      );
      const swapped =
        row > 1 &&
        column > 1 &&
        from[row - 1] === to[column - 2] &&
        from[row - 2] === to[column - 1];
      if (swapped) best = Math.min(best, at(row - 2, column - 2) + 1);
      const line = table[row];
      if (line !== undefined) line[column] = best;
    }
  }
  return at(rows - 1, columns - 1);
}

/**
 * The known word closest to `word` — within 2 edits (1 for words of up to 5 letters, so short
 * words are not matched to anything), or one that starts with it — else `undefined`. Case is ignored.
 */
export function closestWord(word: string, known: readonly string[]): string | undefined {
  const typed = word.toLowerCase();
  if (typed === '') return undefined;
  const limit = typed.length <= 5 ? 1 : 2;
  let best: { word: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(typed, candidate.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance))
      best = { word: candidate, distance };
  }
  if (best !== undefined) return best.word;
  const prefixed = known.filter((candidate) => typed.length >= 3 && candidate.startsWith(typed));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}
