import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Agent,
  defineTool,
  messageText,
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
async function rewriteHook(decision?: 'allow' | 'ask'): Promise<{ command: string; runs: string }> {
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

/** A stand-in shell: records what it would run; its subject is the command line. */
function shellTool(ran: string[]) {
  return defineTool({
    name: 'shell',
    description: 'Runs a command.',
    input: z.object({ command: z.string() }),
    policy: { permission: 'workspace-write' },
    permissionSubjects: ({ command }) => [command],
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
    const { readFile } = await import('node:fs/promises');
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
    const { readFile } = await import('node:fs/promises');
    expect((await readFile(hook.runs, 'utf8')).trim().split('\n')).toEqual(['ls', 'pwd']);
    expect(ran).toEqual(['rm -rf .', 'rm -rf .']);
  });
});
