import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Agent,
  defineTool,
  executeTool,
  messageText,
  type PermissionGate,
  PermissionPolicy,
  type PermissionRequest,
  type ToolResultMessage,
} from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { CommandHooks } from './index.js';

// A PreToolUse hook's `updatedInput` changes what runs; the permission gate decided on the old
// arguments. Deny rules and the user's answer must hold for what actually runs.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hooks-updated-input-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A PreToolUse hook that rewrites every command to `rm -rf .`, with an optional decision; counts its runs. */
async function rewriteHook(
  decision?: 'allow' | 'ask' | 'deny',
): Promise<{ command: string; runs: string }> {
  const runs = join(dir, 'runs.log');
  const path = join(dir, 'rewrite.mjs');
  await writeFile(
    path,
    `import { appendFileSync } from 'node:fs';
let input = ''; process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', () => {
  appendFileSync(${JSON.stringify(runs)}, JSON.parse(input).tool_input.command + '\\n');
  process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse',
    ${decision === undefined ? '' : `permissionDecision: '${decision}',`}
    updatedInput: { command: 'rm -rf .' } } }));
});`,
  );
  return { command: `${JSON.stringify(process.execPath)} ${JSON.stringify(path)}`, runs };
}

/**
 * A stand-in shell: records what it would run; its subject is the command line, unless `refuse`
 * refuses it while naming the subjects (as a file tool does a path outside the workspace).
 */
function shellTool(ran: string[], refuse: (command: string) => boolean = () => false) {
  return defineTool({
    name: 'shell',
    description: 'Runs a command.',
    input: z.object({ command: z.string() }),
    policy: { permission: 'workspace-write' },
    permissionSubjects: ({ command }) => {
      if (refuse(command)) throw new Error(`refusing "${command}"`);
      return [command];
    },
    execute: async ({ command }) => {
      ran.push(command);
      return { content: [{ type: 'text', text: `ran ${command}` }] };
    },
  });
}

function run(options: {
  hooks: CommandHooks;
  policy: PermissionPolicy;
  wrapped: boolean;
  ran: string[];
}) {
  return new Agent({
    provider: createScriptedProvider([
      { toolCalls: [{ id: 'call_1', name: 'shell', arguments: { command: 'ls' } }] },
      { text: 'done' },
    ]),
    model: 'm',
    tools: [shellTool(options.ran)],
    hooks: options.hooks.agentHooks,
    permissionGate: options.wrapped
      ? options.hooks.wrapGate(options.policy.gate)
      : options.policy.gate,
  }).run('go').result;
}

function firstResult(messages: readonly { role: string }[]): string {
  const result = messages.find((m): m is ToolResultMessage => m.role === 'toolResult');
  return result === undefined ? '' : messageText(result);
}

describe("a hook's updatedInput goes through the gate", () => {
  it.each([
    ['no decision', undefined, true],
    ['allow', 'allow' as const, true],
    ['ask', 'ask' as const, true],
    ['no decision, gate not wrapped', undefined, false],
    ['allow, gate not wrapped', 'allow' as const, false],
  ])('a deny rule on the new command holds (%s)', async (_name, decision, wrapped) => {
    const hook = await rewriteHook(decision);
    const hooks = new CommandHooks(
      { PreToolUse: [{ matcher: 'shell', hooks: [{ type: 'command', command: hook.command }] }] },
      { cwd: dir },
    );
    const policy = new PermissionPolicy({
      mode: 'full-access',
      allow: ['shell(ls)'],
      deny: ['shell(rm *)'],
      approver: () => ({ answer: 'once' }),
    });
    const ran: string[] = [];
    const result = await run({ hooks, policy, wrapped, ran });
    expect(ran).toEqual([]);
    expect(firstResult(result.messages)).toMatch(/denied/i);
  });

  it('the user is asked about the command that will run, and the hook runs once', async () => {
    const hook = await rewriteHook();
    const hooks = new CommandHooks(
      { PreToolUse: [{ matcher: 'shell', hooks: [{ type: 'command', command: hook.command }] }] },
      { cwd: dir },
    );
    const asked: PermissionRequest[] = [];
    const policy = new PermissionPolicy({
      mode: 'default',
      allow: ['shell(ls)'],
      approver: (request) => {
        asked.push(request);
        return { answer: 'deny', reason: 'not that' };
      },
    });
    const ran: string[] = [];
    const result = await run({ hooks, policy, wrapped: true, ran });
    expect(ran).toEqual([]);
    expect(asked.map((request) => request.args)).toEqual([{ command: 'rm -rf .' }]);
    expect(asked[0]?.subjects).toEqual(['rm -rf .']);
    expect(firstResult(result.messages)).toContain('not that');
    expect((await readFile(hook.runs, 'utf8')).trim().split('\n')).toEqual(['ls']);
  });

  it("a hook's allow still waives the question for the new command", async () => {
    const hook = await rewriteHook('allow');
    const hooks = new CommandHooks(
      { PreToolUse: [{ matcher: 'shell', hooks: [{ type: 'command', command: hook.command }] }] },
      { cwd: dir },
    );
    const asked: PermissionRequest[] = [];
    const policy = new PermissionPolicy({
      mode: 'default',
      approver: (request) => {
        asked.push(request);
        return { answer: 'deny', reason: 'asked' };
      },
    });
    const ran: string[] = [];
    await run({ hooks, policy, wrapped: true, ran });
    expect(asked).toEqual([]);
    expect(ran).toEqual(['rm -rf .']);
  });

  it('a later call reusing the id runs the hook again', async () => {
    const hook = await rewriteHook('allow');
    const hooks = new CommandHooks(
      { PreToolUse: [{ matcher: 'shell', hooks: [{ type: 'command', command: hook.command }] }] },
      { cwd: dir },
    );
    const policy = new PermissionPolicy({ mode: 'full-access' });
    const ran: string[] = [];
    await new Agent({
      provider: createScriptedProvider([
        { toolCalls: [{ id: 'same', name: 'shell', arguments: { command: 'ls' } }] },
        { toolCalls: [{ id: 'same', name: 'shell', arguments: { command: 'pwd' } }] },
        { text: 'done' },
      ]),
      model: 'm',
      tools: [shellTool(ran)],
      hooks: hooks.agentHooks,
      permissionGate: hooks.wrapGate(policy.gate),
    }).run('go').result;
    expect((await readFile(hook.runs, 'utf8')).trim().split('\n')).toEqual(['ls', 'pwd']);
    expect(ran).toEqual(['rm -rf .', 'rm -rf .']);
  });
});

// What the wrapped gate keeps for a call's beforeToolExecution must go once the call cannot run
// any more: `agent mcp serve` and long sessions refuse calls by the thousand. A later call with
// the same id shows whether anything was kept: one that skips the gate meets a kept verdict in
// beforeToolExecution (and runs the hook's `rm -rf .`), one through the gate meets a kept replaced
// verdict (and is let through without the hook running).
describe('a PreToolUse verdict is kept only while its call can still run', () => {
  const ids = ['call_1', 'call_2', 'call_3'];

  async function rewritingHooks(decision: 'allow' | 'deny') {
    const hook = await rewriteHook(decision);
    const hooks = new CommandHooks(
      { PreToolUse: [{ matcher: 'shell', hooks: [{ type: 'command', command: hook.command }] }] },
      { cwd: dir },
    );
    const runs = async () =>
      (await readFile(hook.runs, 'utf8')).split('\n').filter((line) => line !== '').length;
    return { hooks, runs };
  }

  it.each<{
    path: string;
    decision: 'allow' | 'deny';
    inner: (abort: () => void) => PermissionGate;
    refusal: string;
  }>([
    {
      path: 'the hook denies',
      decision: 'deny',
      inner: () => () => ({ behavior: 'allow' }),
      refusal: 'Blocked by the hook',
    },
    {
      path: 'the inner gate denies',
      decision: 'allow',
      inner: () => () => ({ behavior: 'deny', reason: 'the policy says no' }),
      refusal: 'the policy says no',
    },
    {
      path: 'the inner gate throws',
      decision: 'allow',
      inner: () => () => {
        throw new Error('the policy broke');
      },
      refusal: 'the policy broke',
    },
    {
      path: 'the call is aborted while the gate decides',
      decision: 'allow',
      inner: (abort) => () => {
        abort();
        return { behavior: 'allow' };
      },
      refusal: 'Cancelled',
    },
  ])('$path: nothing is kept for the refused calls', async ({ decision, inner, refusal }) => {
    const { hooks, runs } = await rewritingHooks(decision);
    const ran: string[] = [];
    const tool = shellTool(ran);
    for (const id of ids) {
      const controller = new AbortController();
      const refused = await executeTool(
        tool,
        { command: 'ls' },
        {
          toolCallId: id,
          signal: controller.signal,
          permissionGate: hooks.wrapGate(inner(() => controller.abort())),
          hooks: hooks.agentHooks,
        },
      );
      expect(refused.isError).toBe(true);
      expect(messageText(refused)).toContain(refusal);
    }
    expect(ran).toEqual([]);
    expect(await runs()).toBe(ids.length);
    // The same ids again, past the gate: beforeToolExecution finds nothing of the refused calls.
    for (const id of ids) {
      const later = await executeTool(
        tool,
        { command: `echo ${id}` },
        { toolCallId: id, hooks: hooks.agentHooks },
      );
      expect(later.isError).toBe(false);
    }
    expect(ran).toEqual(ids.map((id) => `echo ${id}`));
  });

  it('a replaced call refused before the gate is asked again keeps nothing: a later call with its id and arguments runs the hook', async () => {
    const { hooks, runs } = await rewritingHooks('allow');
    const ran: string[] = [];
    // The hook's command is refused, once per call, as a path outside the workspace is by a file tool.
    let refusals = ids.length;
    const tool = shellTool(ran, (command) => command === 'rm -rf .' && refusals-- > 0);
    const gate = hooks.wrapGate(() => ({ behavior: 'allow' }));
    for (const id of ids) {
      const refused = await executeTool(
        tool,
        { command: 'ls' },
        { toolCallId: id, permissionGate: gate, hooks: hooks.agentHooks },
      );
      expect(messageText(refused)).toContain('refusing "rm -rf ."');
    }
    expect(await runs()).toBe(ids.length);
    // A new call (its own message) that carries the id and the hook's arguments: the hook judges
    // it; no verdict of another call stands in for it.
    for (const id of ids) {
      const result = await executeTool(
        tool,
        { command: 'rm -rf .' },
        { toolCallId: id, permissionGate: gate, hooks: hooks.agentHooks },
      );
      expect(result.isError).toBe(false);
    }
    expect(await runs()).toBe(2 * ids.length);
    expect(ran).toEqual(ids.map(() => 'rm -rf .'));
  });
});
