import { describe, expect, it } from 'vitest';
import type { AnyAgentTool } from './tool.js';
import { type ToolSearchEmbeddings, ToolSearchIndex } from './tool-search-index.js';

function tool(name: string, description: string): AnyAgentTool {
  return {
    name,
    description,
    parameters: { type: 'object', properties: {} },
    execute: async () => ({ content: [] }),
  };
}

/**
 * A small real embedding for the tests: each word maps to one of three axes (money, time,
 * people); a text is the normalised count per axis. Records every text it embeds.
 */
class AxisEmbeddings implements ToolSearchEmbeddings {
  readonly texts: string[] = [];
  readonly #axes: Record<string, number> = {
    refund: 0,
    cash: 0,
    money: 0,
    payment: 0,
    back: 0,
    schedule: 1,
    later: 1,
    time: 1,
    member: 2,
    people: 2,
  };

  embed(text: string): Float32Array | undefined {
    this.texts.push(text);
    const vector = new Float32Array(3);
    for (const word of text.toLowerCase().split(/[^a-z]+/)) {
      const axis = this.#axes[word];
      if (axis !== undefined) vector[axis] = (vector[axis] as number) + 1;
    }
    const norm = Math.hypot(...vector);
    return norm === 0 ? undefined : vector.map((value) => value / norm);
  }
}

const catalogue = [
  tool('charges_schedule', 'Schedule a charge for later.'),
  tool('charges_refund', 'Refund a charge: the money goes back (POST /v1/charges/{id}/refund).'),
  tool('members_list', 'List the people of the team.'),
];

describe('ToolSearchIndex with embeddings', () => {
  it('re-ranks the keyword candidates by meaning', () => {
    const query = 'charge, return the cash';
    expect(new ToolSearchIndex(catalogue).search(query, 2)[0]?.name).toBe('charges_schedule');
    const index = new ToolSearchIndex(catalogue, { embeddings: new AxisEmbeddings() });
    expect(index.search(query, 2).map((match) => match.name)).toEqual([
      'charges_refund',
      'charges_schedule',
    ]);
  });

  it('finds by meaning alone a request no tool has a word of, and nothing for unknown words', () => {
    const index = new ToolSearchIndex(catalogue, { embeddings: new AxisEmbeddings() });
    expect(index.search('people', 5).map((match) => match.name)).toEqual(['members_list']);
    // "cash" is in no tool: the tools nearest in meaning are the candidates (none unrelated).
    expect(new ToolSearchIndex(catalogue).search('cash', 5)).toEqual([]);
    expect(index.search('cash', 5).map((match) => match.name)).toEqual(['charges_refund']);
    // Words neither the catalogue nor the embeddings know: nothing.
    expect(index.search('folks', 5)).toEqual([]);
  });

  it('takes meaning-only candidates in a catalogue of up to 2,000 tools, not beyond', () => {
    const filler = (count: number) =>
      Array.from({ length: count }, (_, at) => tool(`tool_${at}`, `Schedule item ${at}.`));
    const small = new ToolSearchIndex([...filler(1_999), catalogue[1] as AnyAgentTool], {
      embeddings: new AxisEmbeddings(),
    });
    expect(small.search('cash', 3)[0]?.name).toBe('charges_refund');
    const large = new ToolSearchIndex([...filler(2_000), catalogue[1] as AnyAgentTool], {
      embeddings: new AxisEmbeddings(),
    });
    expect(large.search('cash', 3)).toEqual([]);
  });

  it('weighs meaning more when the request has words no tool uses', () => {
    // Every query embeds to (1, 0); `ptool` is nearer it in meaning than `qtool`, which matches
    // more of the words.
    const embeddings: ToolSearchEmbeddings = {
      embed: (text) =>
        text.startsWith('ptool')
          ? Float32Array.of(0.8, 0.6)
          : text.startsWith('qtool')
            ? Float32Array.of(0.6, 0.8)
            : Float32Array.of(1, 0),
    };
    const tools = [
      tool('ptool', 'Restart the service.'),
      tool('qtool', 'Restart the service worker.'),
    ];
    const index = new ToolSearchIndex(tools, { embeddings });
    const first = (query: string) => index.search(query, 2)[0]?.name;
    // All its words are the catalogue's: the keyword match leads.
    expect(first('restart worker')).toBe('qtool');
    // Half its words are no tool's: meaning leads.
    expect(first('restart worker zorp blick')).toBe('ptool');
  });

  it('keeps the keyword order when the query has no embedding', () => {
    const plain = new ToolSearchIndex(catalogue).search('charge', 3);
    const index = new ToolSearchIndex(catalogue, { embeddings: new AxisEmbeddings() });
    expect(index.search('charge', 3).map((match) => match.name)).toEqual(
      plain.map((match) => match.name),
    );
  });

  it('still ranks an exact tool name first', () => {
    const index = new ToolSearchIndex(catalogue, { embeddings: new AxisEmbeddings() });
    expect(index.search('charges_schedule', 1)[0]?.name).toBe('charges_schedule');
  });

  it('embeds a tool as its name, summary, path words and keywords, without the HTTP method', () => {
    const embeddings = new AxisEmbeddings();
    const tools = [
      ...catalogue,
      {
        ...tool(
          'events_delete',
          'DELETE /calendars/{calendarId}/events/{eventId}\n\nDeletes an event.',
        ),
        keywords: ['events'],
      },
    ];
    new ToolSearchIndex(tools, { embeddings }).search('refund money charges events people', 4);
    expect(embeddings.texts).toContain(
      'charges_refund Refund a charge: the money goes back. v1 charges refund',
    );
    expect(embeddings.texts).toContain('events_delete Deletes an event. calendars events events');
    expect(embeddings.texts).toContain('members_list List the people of the team.');
  });

  it('honours the limit and returns scores in descending order', () => {
    const index = new ToolSearchIndex(catalogue, { embeddings: new AxisEmbeddings() });
    const matches = index.search('charge money schedule people list', 2);
    expect(matches).toHaveLength(2);
    expect(matches[0]?.score).toBeGreaterThanOrEqual(matches[1]?.score ?? Number.NaN);
    expect(index.search('charge', 0)).toEqual([]);
  });

  it('weighs a word by how many of the catalogue tools use it, in the query and in each tool', () => {
    const seen: { text: string; weights: Record<string, number> }[] = [];
    const embeddings: ToolSearchEmbeddings = {
      embed(text, wordWeight) {
        const weights: Record<string, number> = {};
        for (const word of text.toLowerCase().split(/[^a-z]+/))
          if (word !== '' && wordWeight !== undefined) weights[word] = wordWeight(word);
        seen.push({ text, weights });
        return Float32Array.of(1, 0);
      },
    };
    const books = [
      tool('search_index', 'Search the index.'),
      tool('update_synonyms', 'Update the synonyms of an index.'),
      tool('get_stats', 'Statistics of an index.'),
      tool('list_keys', 'List the keys.'),
    ];
    new ToolSearchIndex(books, { embeddings }).search(
      'make novels equivalent in the index synonyms',
      4,
    );
    const query = seen.find(({ text }) => text.startsWith('make novels'));
    // "index" is in three tools of four: 1 / (1 + 3/4); "synonyms" in one: 1 / (1 + 1/4); a word
    // no tool uses keeps its whole weight.
    expect(query?.weights.index).toBeCloseTo(1 / 1.75);
    expect(query?.weights.synonyms).toBeCloseTo(1 / 1.25);
    expect(query?.weights.novels).toBe(1);
    const synonyms = seen.find(({ text }) => text.startsWith('update_synonyms'));
    expect(synonyms?.weights.index).toBeCloseTo(1 / 1.75);
  });
});
