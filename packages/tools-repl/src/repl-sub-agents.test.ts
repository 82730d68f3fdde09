import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  Agent,
  type AnyAgentTool,
  createPermissionGate,
  defineTool,
  type ToolResultMessage,
  toolResultText,
} from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createReplTools, findExecutable, type ReplTools } from './repl-tools.js';

// A sub-agent is isolated from its parent (it sees its task, never the parent's history), but the
// REPL tools it was given ran its cells in the parent's interpreter: it read the variables the
// parent had computed and could change the functions the parent's next cells call. Each
// sub-agent run now gets interpreters of its own; the main agent keeps its own across runs.

const hasPython = findExecutable('python3') !== undefined;
const gate = createPermissionGate({ mode: 'full-access' });

let cwd: string;
let repl: ReplTools | undefined;
beforeEach(async () => {
  cwd = await mkdtemp(path.join(tmpdir(), 'repl-sub-agents-'));
});
afterEach(async () => {
  await repl?.close();
  repl = undefined;
  await rm(cwd, { recursive: true, force: true });
});

/** A tool that runs a child agent (as `@agent/subagent` does: inside the calling run) whose model runs `cells` with `tool`. */
function delegate(tool: string, cells: string[], tools: AnyAgentTool[]): AnyAgentTool {
  return defineTool({
    name: 'delegate',
    description: 'runs a sub-agent',
    input: z.object({}),
    policy: { permission: 'read-only' },
    execute: async (_args, ctx) => {
      const child = new Agent({
        provider: createScriptedProvider([
          ...cells.map((code) => ({ toolCalls: [{ name: tool, arguments: { code } }] })),
          { text: 'child done' },
        ]),
        model: 'child',
        tools,
        permissionGate: gate,
        ...(ctx.run === undefined ? {} : { parentRun: { context: ctx.run, name: 'delegate' } }),
      });
      const run = await child.run('task').result;
      return run.messages
        .filter((message): message is ToolResultMessage => message.role === 'toolResult')
        .map((message) => toolResultText(message.content))
        .join(' | ');
    },
  });
}

/** The parent runs `before`, the sub-agent its cells, then the parent `after`; every result in order. */
async function parentAndChild(
  tool: string,
  before: string,
  childCells: string[],
  after: string,
): Promise<string[]> {
  repl = createReplTools({ cwd, ...(hasPython ? {} : { languages: ['javascript'] }) });
  const tools = [...repl.tools];
  const provider = createScriptedProvider([
    { toolCalls: [{ name: tool, arguments: { code: before } }] },
    { toolCalls: [{ name: 'delegate', arguments: {} }] },
    { toolCalls: [{ name: tool, arguments: { code: after } }] },
    { text: 'done' },
  ]);
  const run = await new Agent({
    provider,
    model: 'parent',
    tools: [...tools, delegate(tool, childCells, tools)],
    permissionGate: gate,
  }).run('go').result;
  return run.messages
    .filter((message): message is ToolResultMessage => message.role === 'toolResult')
    .map((message) => toolResultText(message.content).replace(/^\[new \w+ session\]\n/, ''));
}

describe('a sub-agent’s cells run in interpreters of its own', () => {
  it('js_repl: it cannot read the parent’s variables or replace what the parent calls', async () => {
    const results = await parentAndChild(
      'js_repl',
      'var secret = "s3cret"; function total(list) { return list.length }',
      ['typeof secret', 'globalThis.total = () => "hijacked"; var mine = 1; "set"'],
      '[secret, total([1, 2]), typeof mine].join(" ")',
    );
    expect(results).toEqual([
      '(no output)',
      "=> 'undefined' | => 'set'",
      "=> 's3cret 2 undefined'",
    ]);
  });

  it('python_repl: the same', async (context) => {
    if (!hasPython) context.skip('python3 is not on the PATH');
    const results = await parentAndChild(
      'python_repl',
      'secret = "s3cret"\ndef total(items): return len(items)',
      ["'secret' in globals()", "total = lambda items: 'hijacked'\nmine = 1\n'set'"],
      "' '.join([secret, str(total([1, 2])), str('mine' in globals())])",
    );
    expect(results).toEqual(['(no output)', "=> False | => 'set'", "=> 's3cret 2 False'"]);
  });

  it('the main agent keeps its interpreter across its runs', async () => {
    repl = createReplTools({ cwd, languages: ['javascript'] });
    const agent = (code: string) =>
      new Agent({
        provider: createScriptedProvider([
          { toolCalls: [{ name: 'js_repl', arguments: { code } }] },
          { text: 'done' },
        ]),
        model: 'main',
        tools: (repl as ReplTools).tools,
        permissionGate: gate,
      });
    await agent('var kept = 41').run('first').result;
    const second = await agent('kept + 1').run('second').result;
    const result = second.messages.find((message) => message.role === 'toolResult');
    expect(result?.role === 'toolResult' && toolResultText(result.content)).toBe('=> 42');
  });
});
