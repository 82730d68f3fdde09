import { describe, expect, it } from 'vitest';
import type { AnyAgentTool } from './tool.js';
import { ToolSearchAssociations } from './tool-search-associations.js';
import { ToolSearchIndex } from './tool-search-index.js';

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
