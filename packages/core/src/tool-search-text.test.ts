import { describe, expect, it } from 'vitest';
import type { AnyAgentTool } from './tool.js';
import { ToolSearchAssociations } from './tool-search-associations.js';
import { type ToolSearchEmbeddings, ToolSearchIndex } from './tool-search-index.js';

function tool(name: string, description: string, searchText?: string): AnyAgentTool {
  return {
    name,
    description,
    parameters: { type: 'object', properties: {} },
    execute: async () => ({ content: [] }),
    ...(searchText === undefined ? {} : { searchText }),
  };
}

const presence = tool('users_getPresence', 'Gets user presence information.', 'presence\nonline');
const catalogue = [
  tool('users_list', 'Lists all users in a workspace.', 'members\nname\ndeleted'),
  tool('users_info', 'Gets information about a user.', 'user\nname\ntz'),
  presence,
  tool('chat_postMessage', 'Sends a message to a channel.'),
];

describe('ToolSearchIndex: a tool’s search text', () => {
  it('finds the tool whose answer holds the question’s words', () => {
    const top = (tools: AnyAgentTool[]) =>
      new ToolSearchIndex(tools).search('is alice online right now', 3).map((match) => match.name);
    expect(top(catalogue)[0]).toBe('users_getPresence');
    // Without its search text, nothing the tools say matches "online".
    const withoutText = catalogue.map(({ searchText: _dropped, ...rest }) => rest);
    expect(top(withoutText)).not.toContain('users_getPresence');
  });

  it('weighs below the description: a tool that says the word outranks one that returns it', () => {
    const index = new ToolSearchIndex([
      tool('a_returns', 'Gets a record.', 'status\nonline'),
      tool('b_says', 'Checks whether a device is online.'),
    ]);
    expect(index.search('online', 2).map((match) => match.name)).toEqual(['b_says', 'a_returns']);
  });

  it.each([1, 5, 50])(
    'does not make a word common: %i tools returning "customer" leave the word’s weight in names as it was',
    (count) => {
      const plain = [
        tool('customers_list', 'Lists customers.'),
        ...Array.from({ length: count }, (_, at) => tool(`thing_${at}`, `Thing number ${at}.`)),
      ];
      const returning = plain.map((each, at) =>
        at === 0 ? each : { ...each, searchText: 'customer\nid\namount' },
      );
      const score = (tools: AnyAgentTool[]) =>
        new ToolSearchIndex(tools).search('customer', 1)[0] as { name: string; score: number };
      expect(score(returning).name).toBe('customers_list');
      expect(score(returning).score).toBeCloseTo(score(plain).score, 10);
    },
  );

  it('a query word only search texts use is still expanded by the associations', () => {
    const associations = ToolSearchAssociations.parse('balance\tinvoice:9\n');
    const index = new ToolSearchIndex(
      [
        tool('account_get', 'Gets the account.', 'balance'),
        tool('invoices_list', 'Lists invoices.'),
        tool('droplets_list', 'Lists droplets.'),
      ],
      { associations },
    );
    expect(index.search('balance', 3).map((match) => match.name)).toContain('invoices_list');
  });

  it('an empty or absent search text changes nothing', () => {
    const plain = catalogue.map(({ searchText: _dropped, ...rest }) => rest);
    const empty = plain.map((each) => ({ ...each, searchText: '' }));
    for (const query of ['send a message', 'list users', 'user information'])
      expect(new ToolSearchIndex(empty).search(query, 4)).toEqual(
        new ToolSearchIndex(plain).search(query, 4),
      );
  });
});

/** Words about money on one axis, about time on the other; records what it embeds. */
class MoneyTimeEmbeddings implements ToolSearchEmbeddings {
  readonly texts: string[] = [];
  embed(text: string): Float32Array | undefined {
    this.texts.push(text);
    const vector = new Float32Array(2);
    for (const word of text.toLowerCase().split(/[^a-z]+/)) {
      if (['money', 'owe', 'balance', 'owed'].includes(word)) vector[0] = (vector[0] as number) + 1;
      if (['when', 'time', 'date'].includes(word)) vector[1] = (vector[1] as number) + 1;
    }
    const norm = Math.hypot(...vector);
    return norm === 0 ? undefined : vector.map((value) => value / norm);
  }
}

describe('ToolSearchIndex with embeddings: a question and what tools return', () => {
  // Equal for the keywords (catalogue order decides); only what they return differs.
  const accounts = [
    tool('account_profile', 'Gets the account profile.', 'name\nemail'),
    tool('account_summary', 'Gets the account summary.', 'balance\nowed'),
    tool('account_history', 'Gets the account history.', 'date\ntime'),
  ];

  it.each([
    'how much money do I owe on my account',
    'what money is on the account',
    'this account: any money to pay?',
    'Is the account in debt, money wise',
  ])('a question (%s) ranks the tool whose answer is about it first', (query) => {
    const index = new ToolSearchIndex(accounts, { embeddings: new MoneyTimeEmbeddings() });
    expect(new ToolSearchIndex(accounts).search(query, 3)[0]?.name).toBe('account_profile');
    expect(index.search(query, 3)[0]?.name).toBe('account_summary');
  });

  it('a request that is not a question is ranked as before, without embedding any answer', () => {
    const embeddings = new MoneyTimeEmbeddings();
    const index = new ToolSearchIndex(accounts, { embeddings });
    const plain = new ToolSearchIndex(accounts);
    for (const query of ['money on my account', 'show the account money', 'account time'])
      expect(index.search(query, 3).map((match) => match.name)).toEqual(
        plain.search(query, 3).map((match) => match.name),
      );
    expect(embeddings.texts).not.toContain('balance owed');
    // The first question embeds each candidate's answer once; later questions reuse it.
    index.search('how much money is owed on the account', 3);
    index.search('when did the account owe money', 3);
    expect(embeddings.texts.filter((text) => text === 'balance owed')).toHaveLength(1);
  });
});
