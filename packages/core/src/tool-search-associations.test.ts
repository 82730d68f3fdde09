import { describe, expect, it } from 'vitest';
import type { AnyAgentTool } from './tool.js';
import { ToolSearchAssociations } from './tool-search-associations.js';
import { ToolSearchIndex } from './tool-search-index.js';

function tool(name: string, description: string): AnyAgentTool {
  return {
    name,
    description,
    parameters: { type: 'object', properties: {} },
    execute: async () => ({ content: [] }),
  };
}

const catalogue = [
  tool('invoices_list', 'List the invoices of the account.'),
  tool('calls_update', 'Updates a call: redirect it or terminate it.'),
  tool('photos_set', 'Set the profile photo of a user.'),
  tool('pictures_gallery', 'A gallery of pictures.'),
];

describe('ToolSearchAssociations.parse', () => {
  it('reads words, phrases and strengths, skipping comments and blank lines', () => {
    const associations = ToolSearchAssociations.parse(
      '# comment\n\nbill\tinvoice:4 account:5\nhang_up\tterminate:6\n',
    );
    expect(associations.size).toBe(2);
    expect(associations.related('bill')).toEqual([
      { term: 'invoice', strength: 0.4 },
      { term: 'account', strength: 0.5 },
    ]);
    expect(associations.related('hang_up')).toEqual([{ term: 'terminate', strength: 0.6 }]);
    expect(associations.related('unknown')).toEqual([]);
  });

  it.each([
    ['no tab', 'bill invoice:4', 'line 1'],
    ['no associates', 'bill\t', 'line 1'],
    ['a strength out of range', 'ok\tfine:3\nbill\tinvoice:0', 'line 2: "invoice:0"'],
    ['a strength that is not a digit', 'bill\tinvoice:x', '"invoice:x"'],
    ['an upper-case word', 'Bill\tinvoice:4', 'line 1'],
    ['a stray separator', 'bill\tinvoice:4  account:5', '""'],
    ['a word with spaces', 'hang up\tterminate:6', 'line 1'],
  ])('refuses %s, naming the line', (_case, text, message) => {
    expect(() => ToolSearchAssociations.parse(text)).toThrow(message);
  });
});

describe('ToolSearchIndex with associations', () => {
  const associations = ToolSearchAssociations.from([
    ['bill', [{ term: 'invoice', strength: 0.8 }]],
    ['hang_up', [{ term: 'terminate', strength: 0.9 }]],
    ['picture', [{ term: 'photo', strength: 0.8 }]],
  ]);

  it('finds a tool through an associate of a query word', () => {
    expect(new ToolSearchIndex(catalogue).search('my unpaid bills', 5)).toEqual([]);
    const found = new ToolSearchIndex(catalogue, { associations }).search('my unpaid bills', 5);
    expect(found.map((match) => match.name)).toEqual(['invoices_list']);
  });

  it('looks adjacent words up as a phrase', () => {
    const index = new ToolSearchIndex(catalogue, { associations });
    expect(index.search('hang up now', 1).map((match) => match.name)).toEqual(['calls_update']);
  });

  describe('a phrasal verb with words between verb and particle', () => {
    const phrases = ToolSearchAssociations.from([
      ['hang_up', [{ term: 'terminate', strength: 0.9 }]],
      ['hold_off', [{ term: 'terminate', strength: 0.9 }]],
      ['phone_caller', [{ term: 'terminate', strength: 0.9 }]],
    ]);
    const index = new ToolSearchIndex(catalogue, { associations: phrases });
    const finds = (query: string) =>
      index.search(query, 5).some((match) => match.name === 'calls_update');

    // Stop words between them do not count: "the" is gone before the words are paired.
    it.each([
      'hang the phone up',
      'hang that phone up',
      'hang my angry phone up',
      'hold the meeting off',
    ])('is looked up as the phrase: %s', (query) => {
      expect(finds(query)).toBe(true);
    });

    it.each([
      // More than two kept words between them.
      'hang that annoying angry phone up',
      // The second word is no particle.
      'phone the angry caller',
      // The particle comes first.
      'up the phone hang',
    ])('is not: %s', (query) => {
      expect(finds(query)).toBe(false);
    });
  });

  it('expands only words the catalogue does not use itself', () => {
    const index = new ToolSearchIndex(catalogue, { associations });
    // "picture" is a word of this catalogue: it finds its own tools, not the associates'.
    expect(index.search('my picture', 5).map((match) => match.name)).toEqual(['pictures_gallery']);
    const withoutPictures = new ToolSearchIndex(
      catalogue.filter((tool) => tool.name !== 'pictures_gallery'),
      { associations },
    );
    expect(withoutPictures.search('my picture', 5).map((match) => match.name)).toEqual([
      'photos_set',
    ]);
  });
});
