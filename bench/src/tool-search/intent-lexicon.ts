/**
 * The intent lexicon: how people say in their own words what API operations are named for —
 * "get rid of", "nuke", "call off" → delete, cancel; "money back" → refund; "repo" → repository.
 * Written by language-model helpers from general knowledge, blind to every evaluation set (they
 * were given only the most frequent words of the training corpus's operation summaries and the
 * rules in `intent-lexicon/README.md`), then merged into `@agent/tool-search-data`'s
 * associations by `build-search-data.ts`: a user's phrase becomes a key, each API word an
 * associate.
 *
 * Two kinds of file, one entry a line, `left<TAB>phrase; phrase; …`:
 * - `api-*.tsv`: an API word, then the user's phrasings of it;
 * - `user-*.tsv`: a user's phrase, then the API words it most likely maps to, likeliest first.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { searchTerms } from '@agent/core';

/** One association: a user's phrase (as an association key) → an API term. */
export interface LexiconPair {
  key: string;
  term: string;
  /** 0–1. */
  strength: number;
}

/**
 * An association key for a phrase: its search terms joined by `_` — one word (`nuke`) or an
 * adjacent pair (`call_off`, `money_back`), which is what a query looks up. Longer phrases give
 * their first and last pairs ("pull the plug on" → `pull_plug`), none when nothing is left.
 */
export function phraseKeys(phrase: string): string[] {
  const terms = searchTerms(phrase);
  if (terms.length === 0) return [];
  if (terms.length <= 2) return [terms.join('_')];
  const first = `${terms[0]}_${terms[1]}`;
  const last = `${terms.at(-2)}_${terms.at(-1)}`;
  return first === last ? [first] : [first, last];
}

/**
 * Every pair of the lexicon files in `directory`. `strength` is what a phrasing of an API word
 * gets; a user phrase's API words get it for the first, then 0.1 less for each next one (never
 * below half of it).
 */
export function readIntentLexicon(directory: string, strength: number): LexiconPair[] {
  const pairs: LexiconPair[] = [];
  for (const file of readdirSync(directory).sort()) {
    if (!file.endsWith('.tsv')) continue;
    const userFirst = file.startsWith('user-');
    if (!userFirst && !file.startsWith('api-')) continue;
    const text = readFileSync(`${directory}/${file}`, 'utf8');
    text.split('\n').forEach((line, at) => {
      if (line.trim() === '') return;
      const tab = line.indexOf('\t');
      if (tab < 0) throw new Error(`${file}:${at + 1}: expected "left<TAB>phrase; phrase"`);
      const left = line.slice(0, tab).trim();
      const right = line
        .slice(tab + 1)
        .split(';')
        .map((part) => part.trim())
        .filter((part) => part !== '');
      if (userFirst) {
        right.forEach((apiWord, rank) => {
          const weight = Math.max(strength / 2, strength - 0.1 * rank);
          for (const key of phraseKeys(left))
            for (const term of searchTerms(apiWord)) pairs.push({ key, term, strength: weight });
        });
      } else {
        const terms = searchTerms(left);
        for (const phrase of right)
          for (const key of phraseKeys(phrase))
            for (const term of terms) pairs.push({ key, term, strength });
      }
    });
  }
  // A key is no associate of itself.
  return pairs.filter((pair) => pair.key !== pair.term);
}
