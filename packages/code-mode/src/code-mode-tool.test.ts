import { createRequire } from 'node:module';
import {
  Agent,
  type AgentEvent,
  type AnyAgentTool,
  createPermissionGate,
  defineTool,
  executeTool,
  type PermissionPolicyOptions,
  type ToolCallInfo,
  ToolRegistry,
  type ToolResultMessage,
  toolResultText,
  unfenceUntrusted,
} from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { createSubAgentTool } from '@agent/subagent';
import { McpToolAdapter } from '@agent/tools-mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createCodeModeTool } from './code-mode-tool.js';

// Nested calls through a real Agent: the same permission gate, hooks and events as direct calls.

const readTool = defineTool({
  name: 'read_note',
  description: 'Reads a note.',
  input: z.object({ path: z.string() }),
  policy: { permission: 'read-only', pathAccess: 'read' },
  permissionSubjects: ({ path }) => [path],
  execute: async ({ path }) => `note ${path}`,
});

const writeTool = defineTool({
  name: 'write_note',
  description: 'Writes a note.',
  input: z.object({ path: z.string(), text: z.string() }),
  policy: { permission: 'workspace-write', pathAccess: 'write' },
  permissionSubjects: ({ path }) => [path],
  execute: async ({ path }) => `wrote ${path}`,
});

const shellTool = defineTool({
  name: 'shell',
  description: 'Runs a command.',
  input: z.object({ command: z.string() }),
  permissionSubjects: ({ command }) => [command],
  execute: async ({ command }) => `ran ${command}`,
});

/** Runs one script as the model would: a run_script call, then a final answer. */
async function runInAgent(
  script: string,
  tools: AnyAgentTool[],
  options: ConstructorParameters<typeof Agent>[0] extends infer O ? Partial<O> : never = {},
): Promise<{ result: ToolResultMessage; events: AgentEvent[]; requests: unknown[] }> {
  const provider = createScriptedProvider([
    { toolCalls: [{ id: 'script', name: 'run_script', arguments: { script } }] },
    { text: 'done' },
  ]);
  const events: AgentEvent[] = [];
  const agent = new Agent({
    provider,
    model: 'test',
    tools: [createCodeModeTool({ tools })],
    onEvent: (event) => events.push(event),
    ...options,
  });
  const run = await agent.run('go').result;
  const result = run.messages.find((message) => message.role === 'toolResult');
  if (result?.role !== 'toolResult') throw new Error('no result');
  return { result, events, requests: provider.requests };
}

/** How a call came out: `ok` or its error kind. */
function verdict(message: ToolResultMessage): string {
  return message.isError ? (message.errorKind ?? 'failed') : 'ok';
}

describe('nested calls are decided exactly as direct calls', () => {
  const rules: [string, PermissionPolicyOptions][] = [
    ['default mode, no approver', { mode: 'default' }],
    ['read-only mode', { mode: 'read-only' }],
    ['workspace-write mode', { mode: 'workspace-write' }],
    ['full-access mode', { mode: 'full-access' }],
    ['an allow rule on a subject', { allow: ['shell(git *)'] }],
    ['a deny rule', { mode: 'full-access', deny: ['write_note(/etc/*)', 'shell(rm *)'] }],
    ['an ask rule with no approver', { mode: 'full-access', ask: ['read_note(secret*)'] }],
    ['a disabled tool', { mode: 'full-access', disabledTools: ['shell'] }],
    ['a tool-wide allow rule', { allow: ['read_note', 'write_note'] }],
  ];
  const calls: [AnyAgentTool, Record<string, unknown>][] = [
    [readTool, { path: 'notes/a.md' }],
    [readTool, { path: 'secret.md' }],
    [writeTool, { path: 'notes/a.md', text: 'x' }],
    [writeTool, { path: '/etc/passwd', text: 'x' }],
    [shellTool, { command: 'git status' }],
    [shellTool, { command: 'rm -rf /' }],
  ];

  it.each(rules)('%s', async (_name, policy) => {
    const direct: string[] = [];
    for (const [tool, args] of calls) {
      direct.push(
        verdict(await executeTool(tool, args, { permissionGate: createPermissionGate(policy) })),
      );
    }
    const script = `const calls = ${JSON.stringify(calls.map(([tool, args]) => [tool.name, args]))};
      const verdicts = [];
      for (const [name, args] of calls) {
        try { await tools[name](args); verdicts.push('ok') } catch (e) { verdicts.push(e.kind) }
      }
      return verdicts.join(' ')`;
    const { result } = await runInAgent(script, [readTool, writeTool, shellTool], {
      // The script tool itself is allowed; what it calls is not, unless the rules say so.
      permissionGate: createPermissionGate({
        ...policy,
        allow: [...(policy.allow ?? []), 'run_script'],
      }),
    });
    expect(toolResultText(result.content)).toBe(direct.join(' '));
    // Every set of rules here allows something and refuses something else, or allows all.
    expect(direct.length).toBe(calls.length);
  });

  it('an approval question pauses the script; the answer decides; a denial is readable in the script', async () => {
    const asked: string[] = [];
    let answer: (value: 'once' | 'deny') => void = () => undefined;
    const { result } = await runInAgent(
      `const out = [];
       for (const path of ['a.md', 'b.md']) {
         try { out.push(await tools.write_note({ path, text: 'x' })) } catch (e) { out.push(e.message) }
       }
       return out.join(' | ')`,
      [writeTool],
      {
        permissionGate: createPermissionGate({
          allow: ['run_script'],
          approver: (request) => {
            asked.push(
              `${request.toolName} ${request.subjects.join(',')} ${request.parentToolCallId}`,
            );
            // The first question is answered later: the script must wait for it.
            if (asked.length === 1)
              return new Promise((resolve) => {
                answer = resolve;
                setImmediate(() => answer('once'));
              });
            return 'deny';
          },
        }),
      },
    );
    expect(asked).toEqual(['write_note a.md script', 'write_note b.md script']);
    expect(toolResultText(result.content)).toBe(
      'wrote a.md | Permission denied: Denied by the user',
    );
  });

  it('a call the gate cannot approve never runs its tool', async () => {
    let ran = false;
    const guarded = defineTool({
      name: 'guarded',
      description: 'records that it ran',
      input: z.object({}),
      execute: async () => {
        ran = true;
        return 'ran';
      },
    });
    const { result } = await runInAgent('return await tools.guarded({})', [guarded], {
      permissionGate: createPermissionGate({ allow: ['run_script'] }),
    });
    expect(ran).toBe(false);
    expect(toolResultText(result.content)).toMatch(
      /^The script failed: ToolCallError: Permission denied/,
    );
  });
});

describe('hooks, events and the context', () => {
  it('hooks see nested calls (with the parent id) and can skip, replace and rewrite them', async () => {
    const seen: string[] = [];
    const { result } = await runInAgent(
      `const a = await tools.read_note({ path: 'x' });
       let b; try { await tools.read_note({ path: 'skip-me' }) } catch (e) { b = e.kind + ': ' + e.message }
       return [a, b].join(' / ')`,
      [readTool],
      {
        hooks: {
          beforeToolExecution: (call: ToolCallInfo) => {
            seen.push(`${call.toolName} ${call.parentToolCallId ?? '-'}`);
            const args = call.args as { path?: string };
            if (args.path === 'skip-me') return { action: 'skip', reason: 'not today' };
            if (args.path === 'x') return { action: 'replace', args: { path: 'y' } };
            return undefined;
          },
          afterToolExecution: (call, outcome) =>
            call.toolName === 'read_note'
              ? {
                  ...outcome,
                  content: [{ type: 'text', text: `${toolResultText(outcome.content)}!` }],
                }
              : undefined,
        },
      },
    );
    expect(seen).toEqual(['run_script -', 'read_note script', 'read_note script']);
    expect(toolResultText(result.content)).toBe('note y! / cancelled: Skipped: not today');
  });

  it('nested events carry the parent call; the model sees only the script result', async () => {
    const { events, requests } = await runInAgent(
      `let n = 0; for (let i = 0; i < 5; i++) n += (await tools.read_note({ path: 'big-' + i })).length; return n`,
      [readTool],
    );
    const tools = events.filter(
      (event): event is Extract<AgentEvent, { type: 'tool-execution-start' }> =>
        event.type === 'tool-execution-start',
    );
    expect(
      tools.map((event) => [event.toolName, event.toolCallId, event.parentToolCallId]),
    ).toEqual([
      ['run_script', 'script', undefined],
      ['read_note', 'script/1', 'script'],
      ['read_note', 'script/2', 'script'],
      ['read_note', 'script/3', 'script'],
      ['read_note', 'script/4', 'script'],
      ['read_note', 'script/5', 'script'],
    ]);
    const second = JSON.stringify(requests[1]);
    expect(second).toContain('"text":"50"');
    expect(second).not.toContain('note big-');
  });

  it('a tool run by execute directly, without the loop, is refused (fail closed)', async () => {
    const tool = createCodeModeTool({ tools: [readTool] });
    await expect(
      tool.execute(
        { script: 'return 1' },
        {
          toolCallId: 'x',
          toolName: 'run_script',
          signal: new AbortController().signal,
          onUpdate: () => undefined,
          onProgress: () => undefined,
        },
      ),
    ).rejects.toThrow(/Code mode needs ctx\.callTool/);
  });

  it('aborting the run mid-script cancels the script and its running call', async () => {
    let aborted = false;
    let started: () => void = () => undefined;
    const startedPromise = new Promise<void>((resolve) => {
      started = resolve;
    });
    const hang = defineTool({
      name: 'hang',
      description: 'waits until cancelled',
      input: z.object({}),
      execute: (_args, ctx) =>
        new Promise<string>((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => {
            aborted = true;
            reject(ctx.signal.reason);
          });
          started();
        }),
    });
    const agent = new Agent({
      provider: createScriptedProvider([
        {
          toolCalls: [
            { name: 'run_script', arguments: { script: 'await tools.hang({}); return "never"' } },
          ],
        },
      ]),
      model: 'test',
      tools: [createCodeModeTool({ tools: [hang] })],
    });
    const run = agent.run('go');
    await startedPromise;
    run.abort();
    const result = await run.result;
    expect(result.stopReason).toBe('aborted');
    expect(aborted).toBe(true);
    const message = result.messages.find((item) => item.role === 'toolResult');
    expect(message?.role === 'toolResult' && toolResultText(message.content)).toBe('Cancelled');
  });
});

describe('sub-agent and MCP tools called from a script', () => {
  it("a sub-agent's own calls stay under the parent's gate", async () => {
    const ran: string[] = [];
    const recordingShell = defineTool({
      name: 'shell',
      description: 'Runs a command (records it).',
      input: z.object({ command: z.string() }),
      permissionSubjects: ({ command }) => [command],
      execute: async ({ command }) => {
        ran.push(command);
        return `ran ${command}`;
      },
    });
    const asked: string[] = [];
    const helper = createSubAgentTool({
      name: 'helper',
      description: 'A helper that runs a shell command.',
      provider: createScriptedProvider([
        {
          toolCalls: [
            { name: 'shell', arguments: { command: 'rm -rf /' } },
            { name: 'shell', arguments: { command: 'ls' } },
          ],
        },
        { text: 'I could not.' },
      ]),
      model: 'test',
      tools: [recordingShell],
    });
    const gate = createPermissionGate({ mode: 'full-access', deny: ['shell(rm *)'] });
    const { result } = await runInAgent(
      'return await tools.helper({ task: "clean up" })',
      [helper],
      {
        permissionGate: (request) => {
          asked.push(`${request.agentPath?.join('>') ?? ''}:${request.toolName}`);
          return gate(request);
        },
      },
    );
    expect(toolResultText(result.content)).toBe('I could not.');
    expect(ran).toEqual(['ls']);
    expect(asked).toEqual([':run_script', ':helper', 'helper:shell', 'helper:shell']);
  });

  describe('MCP (the everything reference server over stdio)', () => {
    let adapter: McpToolAdapter;
    beforeAll(async () => {
      const entry = createRequire(import.meta.url).resolve(
        '@modelcontextprotocol/server-everything/dist/index.js',
      );
      adapter = await McpToolAdapter.connect({
        name: 'everything',
        transport: { type: 'stdio', command: process.execPath, args: [entry, 'stdio'] },
      });
    });
    afterAll(async () => {
      await adapter.close();
    });

    it("a script reads an MCP server's JSON as a value; what it prints is fenced as untrusted", async () => {
      const tools = adapter
        .tools()
        .filter((tool) => tool.name === 'everything__get-structured-content');
      const script = [
        'const weather = await tools["everything__get-structured-content"]({ location: "New York" });',
        'console.log(typeof weather, weather.temperature);',
        'return weather.temperature;',
      ].join('\n');
      const { result } = await runInAgent(script, tools, {
        permissionGate: createPermissionGate({ allow: ['run_script', 'everything__*'] }),
      });
      const text = toolResultText(result.content);
      expect(result.isError).toBe(false);
      expect(text).toMatch(
        /^Untrusted: the text between the UNTRUSTED SCRIPT CONTENT markers comes from a script that read what third parties wrote/,
      );
      const inner = unfenceUntrusted(text.slice(text.indexOf('\n\n') + 2))?.inner;
      // The server's text reached the script as the JSON value it holds, not a fenced string.
      expect(inner).toBe('object 33\n\nReturned:\n33');
    });

    it('a script that read only our own tools is not fenced', async () => {
      const { result } = await runInAgent('return await tools.read_note({ path: "a" })', [
        readTool,
      ]);
      expect(toolResultText(result.content)).toBe('note a');
    });

    it('a script calls an MCP tool; a rule on its MCP subject denies it as it would directly', async () => {
      const tools = adapter.tools().filter((tool) => tool.name === 'everything__get-sum');
      expect(tools).toHaveLength(1);
      const script = 'return await tools["everything__get-sum"]({ a: 2, b: 3 })';
      const allowed = await runInAgent(script, tools, {
        permissionGate: createPermissionGate({ allow: ['run_script', 'everything__*'] }),
      });
      expect(toolResultText(allowed.result.content)).toContain('5');
      const rules = {
        mode: 'full-access' as const,
        deny: ['everything__get-sum(everything/get-sum)'],
      };
      const denied = await runInAgent(script, tools, {
        permissionGate: createPermissionGate(rules),
      });
      const direct = await executeTool(
        tools[0] as AnyAgentTool,
        { a: 2, b: 3 },
        {
          permissionGate: createPermissionGate(rules),
        },
      );
      expect(direct.errorKind).toBe('denied');
      expect(toolResultText(denied.result.content)).toMatch(
        new RegExp(
          `^The script failed: ToolCallError: ${escapeRegExp(toolResultText(direct.content))}(\n|$)`,
        ),
      );
    });
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('JSON content in scripts', () => {
  it('a result that is one JSON block is that value in the script; mixed content is its text', async () => {
    const stats = defineTool({
      name: 'stats',
      description: 'Counts.',
      input: z.object({ mixed: z.boolean() }),
      policy: { permission: 'read-only' },
      execute: async ({ mixed }) => ({
        content: mixed
          ? [
              { type: 'text', text: 'count:' },
              { type: 'json', value: 3 },
            ]
          : [{ type: 'json', value: { files: 3, names: ['a', 'b'] } }],
      }),
    });
    const { result } = await runInAgent(
      `const only = await tools.stats({ mixed: false });
       const mixed = await tools.stats({ mixed: true });
       return JSON.stringify([only.files + only.names.length, mixed])`,
      [stats],
    );
    expect(JSON.parse(toolResultText(result.content))).toEqual([5, 'count:\n3']);
  });

  it('a JSON block no JSON can hold is a failed call in the script, not a crash of the process', async () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const odd = defineTool({
      name: 'odd',
      description: 'Returns a value JSON cannot hold.',
      input: z.object({ kind: z.enum(['bigint', 'cycle']) }),
      policy: { permission: 'read-only' },
      execute: async ({ kind }) => ({
        content: [{ type: 'json', value: kind === 'bigint' ? { n: 10n } : cycle }],
      }),
    });
    // Before, the envelope's JSON.stringify threw where nothing caught it: the test process died.
    const { result } = await runInAgent(
      `const out = [];
       for (const kind of ['bigint', 'cycle']) {
         try { await tools.odd({ kind }) } catch (e) { out.push(e.kind + ': ' + e.message.split(':')[0]) }
       }
       return out.join(' | ')`,
      [odd],
    );
    expect(toolResultText(result.content)).toBe(
      'failed: The result of odd cannot be read as JSON | failed: The result of odd cannot be read as JSON',
    );
  });
});

describe('the tools a script can call are fixed at creation', () => {
  it('a registry changed later adds nothing: not run_script itself, not another tool', async () => {
    const registry = new ToolRegistry([readTool]);
    const tool = createCodeModeTool({ tools: registry });
    // The agent's own registry, say, which then gets the code-mode tool and one more tool.
    registry.register(tool);
    registry.register(writeTool);
    const outcomes = await executeTool(tool, {
      script: `const out = [];
        for (const [name, args] of [['run_script', { script: 'return 1' }], ['write_note', { path: 'a', text: 'x' }], ['read_note', { path: 'a' }]]) {
          try { out.push(await tools[name](args)) } catch (e) { out.push(e.kind) }
        }
        return out.join(' ')`,
    });
    expect(toolResultText(outcomes.content)).toBe('not-found not-found note a');
  });
});
