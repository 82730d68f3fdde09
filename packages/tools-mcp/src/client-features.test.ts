import { Agent, RunBudget } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import type { CreateMessageRequest, ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpCaller, McpLogEntry } from './client-features.js';
import { toMcpRoots, withDefaults } from './client-features.js';
import { type McpAgentTool, McpToolAdapter } from './mcp-tool-adapter.js';
import { nodeServer, referenceServerEntry, resultText, testContext } from './test-helpers.js';

// The official "everything" server offers its sampling, elicitation and roots tools only to a
// client that declares those capabilities; here the adapter declares them because the handlers
// are given, and the server's real requests reach them.
describe('client features against the everything server (stdio)', () => {
  let adapter: McpToolAdapter;
  const elicited: ElicitRequest['params'][] = [];
  /** Who each request said had made the call, in order (elicitations and samplings). */
  const askedBy: { kind: string; callers: readonly McpCaller[] }[] = [];
  const sampled: CreateMessageRequest['params'][] = [];
  const logs: McpLogEntry[] = [];
  const waiting: {
    match: (entry: McpLogEntry) => boolean;
    resolve: (entry: McpLogEntry) => void;
  }[] = [];
  const waitForLog = (match: (entry: McpLogEntry) => boolean): Promise<McpLogEntry> => {
    const seen = logs.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => waiting.push({ match, resolve }));
  };
  const tool = (name: string): McpAgentTool => {
    const found = adapter.tools().find((candidate) => candidate.name === `everything__${name}`);
    if (found === undefined) throw new Error(`no tool ${name}`);
    return found;
  };

  beforeAll(async () => {
    adapter = await McpToolAdapter.connect({
      name: 'everything',
      transport: nodeServer(referenceServerEntry('everything'), ['stdio']),
      elicitation: async (params, context) => {
        elicited.push(params);
        askedBy.push({
          kind: (params as { mode?: string }).mode ?? 'form',
          callers: context.callers,
        });
        // The user fills two fields; the rest keep the schema's defaults.
        return { action: 'accept', content: { name: 'Ada Lovelace', check: true } };
      },
      sampling: async (params, context) => {
        sampled.push(params);
        askedBy.push({ kind: 'sampling', callers: context.callers });
        return {
          role: 'assistant',
          model: 'app-model',
          content: { type: 'text', text: 'a completion from the app' },
        };
      },
      roots: ['/work/project', { uri: 'file:///data', name: 'data' }],
      logLevel: 'debug',
      onLog: (entry) => {
        logs.push(entry);
        for (const waiter of waiting) if (waiter.match(entry)) waiter.resolve(entry);
      },
    });
  });
  afterAll(async () => {
    await adapter.close();
  });

  it('declares only what it can answer, so the server offers the matching tools', () => {
    const names = adapter.tools().map((candidate) => candidate.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'everything__trigger-elicitation-request',
        'everything__trigger-sampling-request',
        'everything__get-roots-list',
      ]),
    );
  });

  it('elicitation: the server’s form reaches the handler; missing fields get their defaults', async () => {
    const result = await tool('trigger-elicitation-request').execute({}, testContext());
    expect(elicited).toHaveLength(1);
    const params = elicited[0] as { message: string; requestedSchema?: { properties: object } };
    expect(params.message).toContain('Please provide inputs');
    expect(Object.keys(params.requestedSchema?.properties ?? {})).toContain('firstLine');
    const text = resultText(result);
    expect(text).toContain('Ada Lovelace');
    // SEP-1034: the default the user did not override was filled in by the client.
    expect(text).toContain('It was a dark and stormy night.');
  });

  it('URL mode, and the URL-elicitation-required error: the handler is asked, then the call is repeated', async () => {
    const before = elicited.length;
    const direct = await tool('trigger-url-elicitation').execute(
      { url: 'https://example.com/consent' },
      testContext(),
    );
    expect(direct.isError).not.toBe(true);
    expect(elicited.slice(before).map((params) => (params as { mode?: string }).mode)).toEqual([
      'url',
    ]);

    const viaError = await tool('trigger-url-elicitation').execute(
      { url: 'https://example.com/consent', errorPath: true, elicitationId: 'e-1' },
      testContext(),
    );
    expect(viaError.isError).not.toBe(true);
    // One for the -32042 error's prerequisite, one for the repeated call's request.
    const urls = elicited.slice(before + 1).map((params) => (params as { url?: string }).url);
    expect(urls).toEqual(['https://modelcontextprotocol.io', 'https://example.com/consent']);
  });

  // A sub-agent's run, as @agent/subagent starts it: its calls carry `ctx.run.agentPath`.
  async function runAs(name: string, tool: string, args: Record<string, unknown>) {
    const child = new Agent({
      provider: createScriptedProvider([
        { toolCalls: [{ name: `everything__${tool}`, arguments: args }] },
        { text: 'done' },
      ]),
      model: 'child',
      tools: adapter.tools(),
      parentRun: {
        context: { runId: 'root', agentPath: [], depth: 0, budget: new RunBudget() },
        name,
      },
    });
    const result = await child.run('go').result;
    expect(result.stopReason).toBe('completed');
  }

  it.each([
    ['form', 'trigger-elicitation-request', {}],
    ['url', 'trigger-url-elicitation', { url: 'https://example.com/consent' }],
    [
      'url',
      'trigger-url-elicitation',
      { url: 'https://example.com/consent', errorPath: true, elicitationId: 'e-2' },
    ],
    ['sampling', 'trigger-sampling-request', { prompt: 'hi', maxTokens: 5 }],
  ])(
    'a %s request during a sub-agent’s call names the sub-agent (%s)',
    async (kind, tool, args) => {
      const before = askedBy.length;
      await runAs('researcher', tool, args);
      const asked = askedBy.slice(before);
      expect(asked.length).toBeGreaterThan(0);
      for (const request of asked) {
        expect(request.kind).toBe(kind);
        expect(request.callers).toEqual([
          { agentPath: ['researcher'], toolName: `everything__${tool}` },
        ]);
      }
    },
  );

  it('a request during the main agent’s call names it with an empty path', async () => {
    const before = askedBy.length;
    await tool('trigger-elicitation-request').execute(
      {},
      testContext({ toolName: 'everything__trigger-elicitation-request' }),
    );
    expect(askedBy.slice(before).map((request) => request.callers)).toEqual([
      [{ agentPath: [], toolName: 'everything__trigger-elicitation-request' }],
    ]);
  });

  it('sampling: the server’s request reaches the handler and its completion goes back', async () => {
    const result = await tool('trigger-sampling-request').execute(
      { prompt: 'say hi', maxTokens: 50 },
      testContext(),
    );
    expect(sampled.at(-1)?.maxTokens).toBe(50);
    expect(JSON.stringify(sampled.at(-1)?.messages)).toContain('say hi');
    expect(resultText(result)).toContain('a completion from the app');
  });

  it('roots: the server lists the roots; setRoots tells it they changed', async () => {
    const first = resultText(await tool('get-roots-list').execute({}, testContext()));
    expect(first).toContain('file:///work/project');
    expect(first).toContain('file:///data');
    await adapter.setRoots(['/elsewhere']);
    // The server refetches on list_changed; the next listing shows the new root.
    let text = '';
    for (let attempt = 0; attempt < 50 && !text.includes('file:///elsewhere'); attempt++) {
      text = resultText(await tool('get-roots-list').execute({}, testContext()));
    }
    expect(text).toContain('file:///elsewhere');
    expect(text).not.toContain('file:///data');
  });

  it('logging: the server’s log messages reach onLog at the level asked for', async () => {
    await tool('toggle-simulated-logging').execute({}, testContext());
    // The server logs once at once, then every 5 s; its roots handler logs too.
    const entry = await waitForLog((candidate) => /level[ -]message/i.test(String(candidate.data)));
    expect(entry.server).toBe('everything');
    expect([
      'debug',
      'info',
      'notice',
      'warning',
      'error',
      'critical',
      'alert',
      'emergency',
    ]).toContain(entry.level);
    expect(logs.some((candidate) => String(candidate.data).includes('Roots updated'))).toBe(true);
    await tool('toggle-simulated-logging').execute({}, testContext());
  });
});

describe('client features, pure parts', () => {
  it('paths become file URIs named after their last segment', () => {
    expect(
      toMcpRoots(['/work/my project/', 'https://example.com/x', { uri: 'file:///a' }]),
    ).toEqual([
      { uri: 'file:///work/my%20project/', name: 'my project' },
      { uri: 'https://example.com/x' },
      { uri: 'file:///a' },
    ]);
    // Trailing slashes dropped in linear time: 200,000 of them before a name took minutes.
    const [root] = toMcpRoots([`/work/${'/'.repeat(200_000)}x//`]);
    expect(root).toMatchObject({ name: 'x' });
  });

  it('defaults fill only what an accepted answer lacks', () => {
    const params = {
      message: 'm',
      requestedSchema: {
        type: 'object' as const,
        properties: {
          a: { type: 'string' as const, default: 'A' },
          b: { type: 'string' as const, default: 'B' },
        },
      },
    };
    expect(withDefaults({ action: 'accept', content: { a: 'mine' } }, params)).toEqual({
      action: 'accept',
      content: { a: 'mine', b: 'B' },
    });
    expect(withDefaults({ action: 'decline' }, params)).toEqual({ action: 'decline' });
  });

  it('a field named like an Object.prototype property gets its default as a plain field', () => {
    const properties = JSON.parse(
      '{"constructor":{"type":"string","default":"c"},"__proto__":{"type":"string","default":"p"}}',
    );
    const params = { message: 'm', requestedSchema: { type: 'object' as const, properties } };
    const { content } = withDefaults({ action: 'accept', content: {} }, params);
    expect(JSON.parse(JSON.stringify(content))).toEqual(
      JSON.parse('{"constructor":"c","__proto__":"p"}'),
    );
    expect(Object.getPrototypeOf(content)).toBe(Object.prototype);
  });

  it('setRoots needs the roots option', async () => {
    const adapter = await McpToolAdapter.connect({
      name: 'plain',
      transport: nodeServer(referenceServerEntry('everything'), ['stdio']),
    });
    try {
      await expect(adapter.setRoots(['/x'])).rejects.toThrow(/needs the roots option/);
      // Without handlers nothing is declared, so the server keeps those tools to itself.
      expect(adapter.tools().map((candidate) => candidate.name)).not.toContain(
        'everything__trigger-sampling-request',
      );
    } finally {
      await adapter.close();
    }
  });
});
