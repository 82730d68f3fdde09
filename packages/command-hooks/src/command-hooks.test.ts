import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, defineTool } from '@agent/core';
import { createScriptedProvider, type ScriptedTurn } from '@agent/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { checkHooksConfig, commandHooks, type HooksConfig } from './index.js';

const cwd = mkdtempSync(join(tmpdir(), 'command-hooks-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const ran: unknown[] = [];
const shell = defineTool({
  name: 'bash',
  description: 'Runs a command (recorded, not run).',
  input: z.object({ command: z.string() }),
  execute: async (args) => {
    ran.push(args);
    return `ran ${args.command}`;
  },
});

async function run(config: HooksConfig, turns: ScriptedTurn[], errors: Error[] = []) {
  ran.length = 0;
  const hooks = commandHooks(config, { cwd, onError: (error) => errors.push(error) });
  const agent = new Agent({
    provider: createScriptedProvider([...turns, { text: 'done' }]),
    model: 'm',
    tools: [shell],
    hooks: hooks.agentHooks,
  });
  await agent.run('go').result;
  return agent.messages
    .filter((message) => message.role === 'toolResult')
    .map((message) =>
      message.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n'),
    );
}

describe('command hooks (real bash commands)', () => {
  it('PreToolUse: exit 2 blocks with stderr for the model; the event arrives as JSON on stdin', async () => {
    const log = join(cwd, 'events.jsonl');
    const config = checkHooksConfig({
      PreToolUse: [
        {
          matcher: 'bash',
          hooks: [
            {
              type: 'command',
              command: `cat >> ${log}; echo >> ${log}; grep -q '"rm ' ${log} && { echo "rm is not allowed here" >&2; exit 2; }; exit 0`,
            },
          ],
        },
      ],
    });
    const texts = await run(config, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'ls' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'rm -rf /' } }] },
    ]);
    expect(texts[0]).toBe('ran ls');
    expect(texts[1]).toBe('Skipped: rm is not allowed here');
    expect(ran).toEqual([{ command: 'ls' }]);
    const first = JSON.parse(readFileSync(log, 'utf8').split('\n')[0] as string);
    expect(first).toMatchObject({
      hook_event_name: 'PreToolUse',
      tool_name: 'bash',
      tool_input: { command: 'ls' },
      cwd,
    });
  });

  it('PreToolUse JSON: deny with a reason, or rewrite the input; the matcher picks the tools', async () => {
    const script = join(cwd, 'decide.sh');
    writeFileSync(
      script,
      `input=$(cat)
case "$input" in
  *'"secret'*) echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no secrets"}}' ;;
  *'"ls'*) echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"ls -la"}}}' ;;
esac
`,
    );
    const texts = await run(
      {
        PreToolUse: [{ matcher: 'ba.*', hooks: [{ type: 'command', command: `bash ${script}` }] }],
      },
      [
        { toolCalls: [{ name: 'bash', arguments: { command: 'secret stuff' } }] },
        { toolCalls: [{ name: 'bash', arguments: { command: 'ls' } }] },
      ],
    );
    expect(texts).toEqual(['Skipped: no secrets', 'ran ls -la']);
    const none = await run(
      { PreToolUse: [{ matcher: 'write_file', hooks: [{ type: 'command', command: 'exit 2' }] }] },
      [{ toolCalls: [{ name: 'bash', arguments: { command: 'echo' } }] }],
    );
    expect(none).toEqual(['ran echo']);
  });

  it('PostToolUse: exit 2 adds its stderr to the result; a failing or slow hook does not block', async () => {
    const errors: Error[] = [];
    const texts = await run(
      {
        PostToolUse: [
          { hooks: [{ type: 'command', command: 'echo "lint: 2 warnings" >&2; exit 2' }] },
          { hooks: [{ type: 'command', command: 'exit 7' }] },
          { hooks: [{ type: 'command', command: 'sleep 5', timeout: 0.2 }] },
        ],
      },
      [{ toolCalls: [{ name: 'bash', arguments: { command: 'make' } }] }],
      errors,
    );
    expect(texts).toEqual(['ran make\n[hook] lint: 2 warnings']);
    expect(errors.map((error) => error.message)).toEqual([
      'PostToolUse hook exited with 7: exit 7',
      'PostToolUse hook timed out after 0.2 s: sleep 5',
    ]);
  });

  it('UserPromptSubmit, Stop and SessionStart for the application', async () => {
    const hooks = commandHooks(
      {
        UserPromptSubmit: [
          {
            hooks: [
              {
                type: 'command',
                command:
                  'grep -q password && { echo "do not paste passwords" >&2; exit 2; }; echo "branch: main"',
              },
            ],
          },
        ],
        SessionStart: [{ hooks: [{ type: 'command', command: 'echo "node 24 here"' }] }],
        Stop: [
          {
            hooks: [
              {
                type: 'command',
                command:
                  'echo "{\\"decision\\":\\"block\\",\\"reason\\":\\"run the tests first\\"}"',
              },
            ],
          },
        ],
      },
      { cwd },
    );
    expect(await hooks.userPromptSubmit('my password is x')).toEqual({
      block: 'do not paste passwords',
      context: '',
    });
    expect(await hooks.userPromptSubmit('fix the bug')).toEqual({ context: 'branch: main' });
    expect(await hooks.sessionStart('startup')).toEqual({ context: 'node 24 here' });
    expect(await hooks.stop('completed')).toEqual({ block: 'run the tests first' });
  });

  it('a malformed configuration is refused with the place of the problem', () => {
    expect(() => checkHooksConfig({ PreTool: [] })).toThrow('hooks: unknown event "PreTool"');
    expect(() => checkHooksConfig({ PreToolUse: [{ matcher: '(', hooks: [] }] })).toThrow(
      'hooks.PreToolUse[0].matcher is not a valid regular expression',
    );
    expect(() => checkHooksConfig({ Stop: [{ hooks: [{ type: 'command' }] }] })).toThrow(
      'hooks.Stop[0].hooks[0] needs type "command" and a "command"',
    );
  });
});
