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

// Every text the same vector: the embeddings rank no tool above another, only the intent does.
const sameForEveryText: ToolSearchEmbeddings = { embed: () => Float32Array.of(1) };

describe.each([
  ['with embeddings', () => ({ embeddings: sameForEveryText })],
  ['keywords alone', () => ({})],
])('what a request asks for, against what a tool may do (%s)', (_case, options) => {
  // The same words, so the same keyword score and embedding: only the policy differs. Ties
  // keep catalogue order, so each case runs on both orders.
  const changes = tool('people_one', 'The people of the team.');
  const reads = {
    ...tool('people_two', 'The people of the team.'),
    policy: { permission: 'read-only' as const },
  };
  const rank = (query: string, order: readonly AnyAgentTool[]) =>
    new ToolSearchIndex(order, options()).search(query, 2).map((match) => match.name);
  const orders = [
    [changes, reads],
    [reads, changes],
  ];

  it.each([
    'who are the people of the team',
    'what people are on the team?',
    'Is anybody of the people on the team',
    'people of the team?',
  ])('a question ranks the tool that only reads first: %s', (query) => {
    for (const order of orders) expect(rank(query, order)).toEqual(['people_two', 'people_one']);
  });

  it.each(['add people to the team', 'the people of the team', 'kick people off the team'])(
    'a request that names no reading ranks the tool that changes things first: %s',
    (query) => {
      for (const order of orders) expect(rank(query, order)).toEqual(['people_one', 'people_two']);
    },
  );

  it.each([
    'show the people of the team',
    'list people on the team',
    'find people of the team',
    'GET the people of the team',
  ])('a request that names reading favours neither: %s', (query) => {
    for (const order of orders) expect(rank(query, order)).toEqual(order.map((each) => each.name));
  });
});
