import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import type { AgentOptions } from './agent-options.js';
import { fitToolDefinition } from './schema-budget.js';
import { createScriptedProvider, type ScriptedStep } from './testing/scripted-provider.js';
import { agentWith, resultText, toolResults } from './testing/test-helpers.js';
import type { AnyAgentTool } from './tool.js';
import { deferTools, type ToolSearchDetails } from './tool-catalogue.js';
import { ToolSearchAssociations } from './tool-search-associations.js';
import { ToolSearchIndex, toolSummary } from './tool-search-index.js';

function apiTool(name: string, description: string, extra: Partial<AnyAgentTool> = {}) {
  const calls: unknown[] = [];
  const tool: AnyAgentTool = {
    name,
    description,
    parameters: {
      type: 'object',
      properties: { owner: { type: 'string' }, repo: { type: 'string' } },
      required: ['owner'],
    },
    source: 'openapi:github',
    execute: async (args) => {
      calls.push(args);
      return { content: [{ type: 'text', text: `${name} done` }] };
    },
    ...extra,
  };
  return Object.assign(tool, { calls });
}

const local: AnyAgentTool = {
  name: 'read_file',
  description: 'Reads a file.',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  source: 'builtin',
  execute: async () => ({ content: [{ type: 'text', text: 'contents' }] }),
};

const catalogue = [
  apiTool('issues_create_comment', 'Create an issue comment. Adds a comment to an issue.', {
    keywords: ['POST /repos/{owner}/{repo}/issues/{issue_number}/comments', 'issues'],
  }),
  apiTool('issues_list_comments', 'List issue comments.', {
    keywords: ['GET /repos/{owner}/{repo}/issues/{issue_number}/comments', 'issues'],
  }),
  apiTool('repos_create_release', 'Create a release.', {
    keywords: ['POST /repos/{owner}/{repo}/releases', 'repos'],
  }),
  apiTool('pulls_merge', 'Merge a pull request.', {
    keywords: ['PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge', 'pulls'],
  }),
  ...Array.from({ length: 40 }, (_, index) =>
    apiTool(`misc_operation_${index}`, `Does miscellaneous thing number ${index}.`),
  ),
];

function catalogueAgent(steps: ScriptedStep[], options: Partial<AgentOptions> = {}) {
  const { provider, agent } = agentWith(steps, [local, ...deferTools(catalogue)], {
    model: 'm',
    ...options,
  });
  const sentTools = (request: number) =>
    (provider.requests[request]?.tools ?? []).map((tool) => tool.name);
  return { agent, provider, sentTools };
}

describe('deferred tools and tool_search', () => {
  it('sends only loaded tools and tool_search; a search loads matches, appended for the next step', async () => {
    const { agent, sentTools } = catalogueAgent([
      {
        toolCalls: [
          {
            id: 's',
            name: 'tool_search',
            arguments: { query: 'add a comment to an issue', limit: 2 },
          },
        ],
      },
      {
        toolCalls: [
          { id: 'c', name: 'issues_create_comment', arguments: { owner: 'acme', repo: 'app' } },
        ],
      },
      {
        toolCalls: [{ id: 's2', name: 'tool_search', arguments: { query: 'merge pull request' } }],
      },
      { text: 'done' },
    ]);
    const result = await agent.run('comment on issue 1').result;
    expect(result.stopReason).toBe('completed');
    expect(sentTools(0)).toEqual(['read_file', 'tool_search']);
    const afterFirst = sentTools(1);
    expect(afterFirst.slice(0, 2)).toEqual(['read_file', 'tool_search']);
    expect(afterFirst.slice(2)).toEqual(['issues_create_comment', 'issues_list_comments']);
    // A later search appends; nothing the model already saw moves.
    expect(sentTools(3).slice(0, 4)).toEqual(afterFirst);
    expect(sentTools(3)).toContain('pulls_merge');
    const results = toolResults(agent.messages);
    expect(resultText(results[0])).toContain('Loaded 2 tools');
    expect(resultText(results[0])).toContain('- issues_create_comment: Create an issue comment.');
    expect(resultText(results[1])).toBe('issues_create_comment done');
    expect(agent.deferredTools.loaded).toEqual([
      'issues_create_comment',
      'issues_list_comments',
      'pulls_merge',
    ]);
  });

  it('a deferred tool called by its exact name runs and is loaded from then on', async () => {
    const { agent, sentTools } = catalogueAgent([
      { toolCalls: [{ id: 'a', name: 'repos_create_release', arguments: { owner: 'acme' } }] },
      { text: 'ok' },
    ]);
    await agent.run('release').result;
    expect(resultText(toolResults(agent.messages)[0])).toBe('repos_create_release done');
    expect(sentTools(1)).toEqual(['read_file', 'tool_search', 'repos_create_release']);
  });

  it('a resumed conversation sees the tools it had loaded, in the same order', async () => {
    const first = catalogueAgent([
      { toolCalls: [{ id: 's', name: 'tool_search', arguments: { query: 'pulls_merge' } }] },
      { text: 'found it' },
    ]);
    await first.agent.run('find merge').result;
    const resumed = catalogueAgent([{ text: 'still here' }], {
      messages: first.agent.toJSON().messages,
    });
    await resumed.agent.run('again').result;
    expect(resumed.sentTools(0)).toEqual(first.sentTools(1));
    expect(resumed.sentTools(0)).toContain('pulls_merge');
  });

  it('says so when nothing matches, supports regex, and reports a bad pattern', async () => {
    const { agent } = catalogueAgent([
      {
        toolCalls: [
          { id: 'a', name: 'tool_search', arguments: { query: 'zebra xylophone' } },
          { id: 'b', name: 'tool_search', arguments: { query: '^issues_', mode: 'regex' } },
          { id: 'c', name: 'tool_search', arguments: { query: '(', mode: 'regex' } },
        ],
      },
      { text: 'ok' },
    ]);
    await agent.run('go').result;
    const [none, regex, bad] = toolResults(agent.messages);
    expect(resultText(none)).toContain('No tools match "zebra xylophone" among the 44 not loaded');
    expect(resultText(regex)).toContain('issues_create_comment');
    expect(resultText(regex)).toContain('issues_list_comments');
    expect(resultText(regex)).not.toContain('pulls_merge');
    expect(bad?.isError).toBe(true);
    expect(resultText(bad)).toContain('Invalid regular expression');
  });

  it('loads its data on the first keyword search only, once, and searches without it if that fails', async () => {
    const steps: ScriptedStep[] = [
      { toolCalls: [{ id: 'a', name: 'tool_search', arguments: { query: 'select:pulls_merge' } }] },
      {
        toolCalls: [
          { id: 'b', name: 'tool_search', arguments: { query: 'post a remark on a bug' } },
          { id: 'c', name: 'tool_search', arguments: { query: 'remark' } },
        ],
      },
      { text: 'ok' },
    ];
    let loads = 0;
    const associations = ToolSearchAssociations.from([
      ['remark', [{ term: 'comment', strength: 0.9 }]],
    ]);
    const loaded = catalogueAgent(steps, {
      toolSearch: {
        loadData: async () => {
          loads++;
          return { associations };
        },
      },
    });
    const run = loaded.agent.run('go');
    await run.result;
    expect(loads).toBe(1);
    const [, found, again] = toolResults(loaded.agent.messages);
    expect(resultText(found)).toContain('issues_create_comment');
    expect(resultText(again)).toContain('issues_create_comment');

    // `select:` alone never loads; a rejected load is reported and the keywords still work.
    let selects = 0;
    const selectOnly = catalogueAgent([steps[0] as ScriptedStep, { text: 'ok' }], {
      toolSearch: {
        loadData: async () => {
          selects++;
          return { associations };
        },
      },
    });
    await selectOnly.agent.run('go').result;
    expect(selects).toBe(0);
    const errors: unknown[] = [];
    const failing = catalogueAgent(
      [
        {
          toolCalls: [
            { id: 'd', name: 'tool_search', arguments: { query: 'merge a pull request' } },
          ],
        },
        { text: 'ok' },
      ],
      {
        toolSearch: {
          loadData: () => Promise.reject(new Error('no data package')),
          onLoadError: (error) => errors.push(error),
        },
      },
    );
    await failing.agent.run('go').result;
    expect(resultText(toolResults(failing.agent.messages)[0])).toContain('pulls_merge');
    expect(errors.map((error) => (error as Error).message)).toEqual(['no data package']);
  });

  it('names the next ten matches without loading them; select: loads the one the model meant', async () => {
    const { agent, sentTools } = catalogueAgent([
      {
        toolCalls: [
          { id: 's', name: 'tool_search', arguments: { query: 'miscellaneous thing', limit: 2 } },
        ],
      },
      {
        toolCalls: [
          { id: 't', name: 'tool_search', arguments: { query: 'select:misc_operation_7' } },
        ],
      },
      { text: 'ok' },
    ]);
    await agent.run('go').result;
    const [search, select] = toolResults(agent.messages);
    const details = search?.details as ToolSearchDetails;
    expect(details.loaded).toHaveLength(2);
    expect(details.others).toHaveLength(10);
    const text = resultText(search);
    expect(text).toContain('Loaded 2 tools; call them from your next step:');
    expect(text).toContain('Also matching, not loaded ("select:name" loads one):');
    for (const other of details.others ?? []) {
      expect(text).toContain(`- ${other.name}: Does miscellaneous thing number`);
      expect(details.loaded).not.toContain(other.name);
    }
    // Loaded: the two, then the one selected; the others were only named.
    expect(sentTools(1).filter((name) => name.startsWith('misc_'))).toEqual(details.loaded);
    expect(resultText(select)).toContain('misc_operation_7');
    expect(sentTools(2).filter((name) => name.startsWith('misc_'))).toEqual([
      ...details.loaded,
      'misc_operation_7',
    ]);
  });

  it('select: loads every tool it names, more than the limit too', async () => {
    const names = Array.from({ length: 8 }, (_, index) => `misc_operation_${index + 20}`);
    const { agent, sentTools } = catalogueAgent([
      {
        toolCalls: [
          {
            id: 's',
            name: 'tool_search',
            arguments: { query: `select:${names.join(',')}`, limit: 3 },
          },
        ],
      },
      { text: 'ok' },
    ]);
    await agent.run('go').result;
    const details = toolResults(agent.messages)[0]?.details as ToolSearchDetails;
    expect(details.loaded).toEqual(names);
    expect(details.others).toBeUndefined();
    expect(sentTools(1).filter((name) => name.startsWith('misc_'))).toEqual(names);
  });

  it('defers a catalogue over budget automatically: other sources first, never defer:false', async () => {
    const big = Array.from({ length: 150 }, (_, index) =>
      apiTool(`op_${index}`, `Operation ${index}.`),
    );
    const pinned = apiTool('op_pinned', 'Always here.', { defer: false });
    const provider = createScriptedProvider([{ text: 'hi' }]);
    const agent = new Agent({ provider, model: 'm', tools: [local, ...big, pinned] });
    await agent.run('hi').result;
    expect(provider.requests[0]?.tools?.map((tool) => tool.name)).toEqual([
      'read_file',
      'op_pinned',
      'tool_search',
    ]);
    expect(agent.deferredTools.automatic).toBe(true);
    expect(agent.deferredTools.pending).toHaveLength(150);

    const small = createScriptedProvider([{ text: 'hi' }]);
    const few = new Agent({ provider: small, model: 'm', tools: [local, ...big.slice(0, 5)] });
    await few.run('hi').result;
    expect(small.requests[0]?.tools).toHaveLength(6);
    expect(few.deferredTools.automatic).toBe(false);

    const off = createScriptedProvider([{ text: 'hi' }]);
    const all = new Agent({
      provider: off,
      model: 'm',
      tools: [local, ...big],
      toolSearch: { auto: false },
    });
    await all.run('hi').result;
    expect(off.requests[0]?.tools).toHaveLength(151);
  });

  it('defers by availability pattern', async () => {
    const provider = createScriptedProvider([{ text: 'hi' }]);
    const agent = new Agent({
      provider,
      model: 'm',
      tools: [local, ...catalogue],
      toolSearch: { defer: ['@openapi:github'] },
    });
    await agent.run('hi').result;
    expect(provider.requests[0]?.tools?.map((tool) => tool.name)).toEqual([
      'read_file',
      'tool_search',
    ]);
  });
});

describe('ToolSearchIndex', () => {
  const index = new ToolSearchIndex(catalogue);

  it('ranks by what the tool does, with words in any form', () => {
    expect(index.search('merging pull requests', 3)[0]?.name).toBe('pulls_merge');
    expect(index.search('create a release', 3)[0]?.name).toBe('repos_create_release');
    expect(index.search('list comments on issues', 3)[0]?.name).toBe('issues_list_comments');
    expect(index.search('pulls_merge', 1)[0]?.name).toBe('pulls_merge');
  });

  it('finds tools by keywords such as an HTTP path, deterministically', () => {
    const first = index.search('releases', 5).map((match) => match.name);
    expect(first[0]).toBe('repos_create_release');
    expect(index.search('releases', 5).map((match) => match.name)).toEqual(first);
    expect(index.search('the and of', 5)).toEqual([]);
  });
});

describe('fitToolDefinition', () => {
  function deep(levels: number, width: number): Record<string, unknown> {
    if (levels === 0) return { type: 'string', description: 'A leaf. '.repeat(20) };
    return {
      type: 'object',
      description: 'A level of a huge vendor schema. It goes on and on.',
      properties: Object.fromEntries(
        Array.from({ length: width }, (_, index) => [`field_${index}`, deep(levels - 1, width)]),
      ),
    };
  }

  it('a __proto__ key in a schema stays a key: its properties do not become the fields', () => {
    // As text, as a server sends it: JSON.parse makes `__proto__` an own key.
    const parameters = JSON.parse(
      `{"type": "object", "__proto__": {"properties": {"injected": {"type": "string"}}},
        "anyOf": [${JSON.stringify(deep(4, 4))}]}`,
    );
    const fitted = fitToolDefinition({ name: 't', description: 'd', parameters }, 1500);
    const shortened = fitted.parameters as Record<string, unknown>;
    expect(Object.getPrototypeOf(shortened)).toBe(Object.prototype);
    // The schema has no `properties` of its own: the shortened one has none either.
    expect(shortened.properties).toBeUndefined();
    expect(Object.hasOwn(shortened, '__proto__')).toBe(true);
  });

  it('leaves a definition within budget untouched', () => {
    const definition = { name: 't', description: 'd', parameters: { type: 'object' as const } };
    expect(fitToolDefinition(definition, 1000)).toBe(definition);
  });

  it('shortens a huge schema to the budget, describing deep levels in words', () => {
    const parameters = { ...deep(5, 8), required: ['field_0'] } as never;
    const definition = { name: 'huge', description: 'Huge.', parameters };
    expect(JSON.stringify(definition).length).toBeGreaterThan(1_000_000);
    const fitted = fitToolDefinition(definition, 24_000);
    const text = JSON.stringify(fitted);
    expect(text.length).toBeLessThanOrEqual(24_000);
    expect(text).toContain('field_0');
    expect(text).toContain('Schema shortened to fit the context');
    expect((fitted.parameters as { required?: string[] }).required).toEqual(['field_0']);
  });

  it('the loop still validates against the full schema', async () => {
    const parameters = {
      type: 'object' as const,
      properties: {
        a: {
          type: 'object',
          properties: { b: { type: 'object', properties: { c: { type: 'integer' } } } },
        },
      },
      description: 'x'.repeat(500),
    };
    const provider = createScriptedProvider([
      { toolCalls: [{ id: 'x', name: 'nested', arguments: { a: { b: { c: 'nope' } } } }] },
      { text: 'ok' },
    ]);
    const agent = new Agent({
      provider,
      model: 'm',
      maxToolDefinitionChars: 450,
      tools: [
        {
          name: 'nested',
          description: 'Nested.',
          parameters,
          execute: async () => ({ content: [{ type: 'text', text: 'ran' }] }),
        },
      ],
    });
    await agent.run('go').result;
    expect(JSON.stringify(provider.requests[0]?.tools).length).toBeLessThanOrEqual(470);
    expect(resultText(toolResults(agent.messages)[0])).toContain(
      'at "a.b.c": expected integer, received string "nope"',
    );
  });
});

describe('search details', () => {
  it('keeps catalogue order for equal scores, and a zero limit finds nothing', () => {
    const twins = ['a_first', 'b_second', 'c_third'].map((name) =>
      apiTool(name, 'Archive the widget.'),
    );
    const index = new ToolSearchIndex(twins);
    expect(index.search('archive widget', 3).map((match) => match.name)).toEqual([
      'a_first',
      'b_second',
      'c_third',
    ]);
    expect(index.search('archive widget', 0)).toEqual([]);
  });

  it('summarises a description whose first line is only the HTTP route', async () => {
    const { agent } = catalogueAgent(
      [
        { toolCalls: [{ id: 's', name: 'tool_search', arguments: { query: 'balance' } }] },
        { text: 'ok' },
      ],
      {
        tools: [
          apiTool(
            'GetBalance',
            'GET /v1/balance\n\n<p>Retrieves the current account balance. More text.</p>',
            {
              defer: true,
            },
          ),
        ],
      },
    );
    await agent.run('go').result;
    expect(resultText(toolResults(agent.messages)[0])).toContain(
      '- GetBalance: GET /v1/balance — Retrieves the current account balance.',
    );
  });

  it('summarises a description whose first line is only the operation id and its route', () => {
    // Square's operations have no summary: the OpenAPI tool's description starts with the id.
    expect(
      toolSummary(
        'CompletePayment (POST /v2/payments/{payment_id}/complete)\n\nCompletes (captures) a payment.\nBy default…',
      ),
    ).toBe(
      'CompletePayment (POST /v2/payments/{payment_id}/complete) — Completes (captures) a payment.',
    );
    expect(toolSummary('v2.Refund_create (PUT /refunds)\n\nRefunds it. More.')).toBe(
      'v2.Refund_create (PUT /refunds) — Refunds it.',
    );
    // A real summary, a word that is not followed by a route, or nothing after: left as they are.
    for (const description of [
      'Archive a project (POST /v3/projects/{id}/archive)\n\nMore words.',
      'Deprecated.\n\nUse listWidgets instead.',
      'RefundPayment\n\nRefunds a payment.',
      'RefundPayment (POST /v2/refunds)',
      'Refund payment (POST /v2/refunds) now\n\nRefunds a payment.',
    ])
      expect(toolSummary(description)).toBe(description.split('\n')[0]);
  });
});

describe('ToolSearch (claw-code, Claude Code): {query, max_results} and select:', () => {
  const seedTools = [
    apiTool('spawn_agent', 'Launch a specialized agent task.', { aliases: ['Agent'] }),
    apiTool('load_skill', 'Load a local skill definition and its instructions.', {
      aliases: ['Skill'],
    }),
    apiTool('web_search', 'Search the web for current information and return cited results.'),
    apiTool('web_fetch', 'Fetch a URL and return its content.'),
  ];

  it('runs claw-code’s keyword example with max_results as the limit', async () => {
    const { agent, sentTools } = catalogueAgent(
      [
        {
          toolCalls: [
            { id: 'k', name: 'ToolSearch', arguments: { query: 'web current', max_results: 1 } },
          ],
        },
        { text: 'ok' },
      ],
      { tools: [local, ...deferTools(seedTools)] },
    );
    await agent.run('find').result;
    const [result] = toolResults(agent.messages);
    expect(result).toMatchObject({ toolName: 'tool_search', isError: false });
    expect(resultText(result)).toMatch(/^Loaded 1 tool;/);
    expect(sentTools(1)).toEqual(['read_file', 'tool_search', 'web_search']);
  });

  it('select:Agent,Skill loads exactly those, by alias, in that order', async () => {
    const { agent, sentTools } = catalogueAgent(
      [
        {
          toolCalls: [{ id: 's', name: 'ToolSearch', arguments: { query: 'select:Agent,Skill' } }],
        },
        { toolCalls: [{ id: 'a', name: 'Agent', arguments: { owner: 'me' } }] },
        { text: 'ok' },
      ],
      { tools: [local, ...deferTools(seedTools)] },
    );
    await agent.run('go').result;
    const results = toolResults(agent.messages);
    expect(resultText(results[0])).toContain('- spawn_agent: Launch a specialized agent task.');
    expect(resultText(results[0])).toContain('- load_skill: Load a local skill definition');
    expect(sentTools(1)).toEqual(['read_file', 'tool_search', 'spawn_agent', 'load_skill']);
    expect(resultText(results[1])).toBe('spawn_agent done');
  });

  it.each([
    ['select:nope', 'No tools match'],
    ['  SELECT: web_fetch , web_fetch ', 'Loaded 1 tool'],
    ['select:read_file', 'No tools match'],
  ])('select edge case %j', async (query, expected) => {
    const { agent } = catalogueAgent(
      [{ toolCalls: [{ id: 's', name: 'ToolSearch', arguments: { query } }] }, { text: 'ok' }],
      { tools: [local, ...deferTools(seedTools)] },
    );
    await agent.run('go').result;
    expect(resultText(toolResults(agent.messages)[0])).toContain(expected);
  });

  it('ToolSearch is not found when nothing is deferred (there is no search tool then)', async () => {
    const { agent } = catalogueAgent(
      [{ toolCalls: [{ id: 's', name: 'ToolSearch', arguments: { query: 'x' } }] }, { text: 'ok' }],
      { tools: [local] },
    );
    await agent.run('go').result;
    expect(toolResults(agent.messages)[0]).toMatchObject({ isError: true, errorKind: 'not-found' });
  });
});
