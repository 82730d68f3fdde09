import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, defineTool, type ToolResultMessage } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { CommandHooks, HooksConfigError, matches, parseHooksConfig } from './index.js';

// Hook matchers written for Claude Code (`Bash`, `Edit|Write`, `mcp__.*`) select our tools; one
// naming a Claude Code tool with no counterpart here is refused with where it is.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'claude-matchers-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const tool = (name: string, source = 'builtin') =>
  defineTool({
    name,
    source,
    description: name,
    input: z.object({ path: z.string() }),
    policy: { permission: 'read-only' },
    execute: async () => `${name} ran`,
  });
const mcpTool = (name: string, source: string) =>
  defineTool({
    name,
    source,
    description: name,
    input: z.object({ q: z.string() }),
    execute: async () => `${name} ran`,
  });

const names = (name: string, claude: string[]) => [name, ...claude];

describe('matches: our names and Claude Code’s', () => {
  it.each<[string, string[], boolean]>([
    ['Bash', names('bash', ['Bash']), true],
    ['bash', names('bash', ['Bash']), true],
    ['Bash', names('bash_output', ['BashOutput', 'KillShell', 'KillBash']), false],
    ['Edit|Write', names('edit_file', ['Edit', 'MultiEdit']), true],
    ['Edit|Write', names('write_file', ['Write']), true],
    ['Edit|Write', names('read_file', ['Read', 'NotebookRead']), false],
    ['mcp__.*', names('github__create_issue', ['mcp__github__create_issue']), true],
    ['mcp__github__.*', names('github__create_issue', ['mcp__github__create_issue']), true],
    ['mcp__gitlab__.*', names('github__create_issue', ['mcp__github__create_issue']), false],
    ['Notebook.*', names('notebook_edit', ['NotebookEdit']), true],
    ['.*', names('anything', []), true],
  ])('%s against %j → %s', (matcher, toolNames, selected) => {
    expect(matches(matcher, toolNames)).toBe(selected);
  });

  it.each([
    ['EnterPlanMode', 'EnterPlanMode'],
    ['Enter.*', 'EnterPlanMode'],
    ['Bash|AskUserQuestion', 'AskUserQuestion'],
    ['(SlashCommand)', 'SlashCommand'],
  ])('refuses %s (naming the file and key)', (matcher, name) => {
    const parse = () =>
      parseHooksConfig(
        { PreToolUse: [{ matcher, hooks: [{ type: 'command', command: 'true' }] }] },
        '/p/.agent/settings.json: hooks',
      );
    expect(parse).toThrow(HooksConfigError);
    expect(parse).toThrow(
      `/p/.agent/settings.json: hooks.PreToolUse[0].matcher ${JSON.stringify(matcher)} names Claude Code's ${name}, which has no counterpart`,
    );
  });

  it.each(['Bash', 'Edit|Write', 'mcp__.*', '.*', '*', '', 'my_tool', '[A-Z].*', '(Bash|Enter.*)'])(
    'accepts %s',
    (matcher) => {
      expect(() =>
        parseHooksConfig({
          PreToolUse: [{ matcher, hooks: [{ type: 'command', command: 'true' }] }],
        }),
      ).not.toThrow();
    },
  );
});

describe('through the real loop', () => {
  it('a PreToolUse hook with matcher "Bash" blocks bash; "Edit|Write" sees file_path beside path', async () => {
    const seen = join(dir, 'seen.jsonl');
    const record = join(dir, 'record.mjs');
    await writeFile(
      record,
      `import { appendFileSync } from 'node:fs';
let input = ''; process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', () => {
  appendFileSync(${JSON.stringify(seen)}, input + '\\n');
  const event = JSON.parse(input);
  if (event.tool_name === 'bash') { process.stderr.write('no shell today'); process.exit(2); }
});`,
    );
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(record)}`;
    const hooks = new CommandHooks(
      parseHooksConfig({
        PreToolUse: [
          { matcher: 'Bash', hooks: [{ type: 'command', command }] },
          { matcher: 'Edit|Write', hooks: [{ type: 'command', command }] },
        ],
      }),
      { cwd: dir },
    );
    const ran: string[] = [];
    const bash = defineTool({
      name: 'bash',
      source: 'builtin',
      description: 'bash',
      input: z.object({ command: z.string() }),
      execute: async ({ command: line }) => {
        ran.push(line);
        return 'ran';
      },
    });
    const provider = createScriptedProvider([
      {
        toolCalls: [
          { name: 'bash', arguments: { command: 'rm -rf x' } },
          { name: 'write_file', arguments: { path: 'notes.md' } },
          { name: 'read_file', arguments: { path: 'notes.md' } },
        ],
      },
      { text: 'done' },
    ]);
    const agent = new Agent({
      provider,
      model: 'm',
      tools: [bash, tool('write_file'), tool('read_file')],
      hooks: hooks.agentHooks,
      permissionGate: hooks.wrapGate(undefined),
      toolExecution: { type: 'sequential' },
    });
    const result = await agent.run('go').result;
    expect(ran).toEqual([]);
    const results = result.messages.filter(
      (message): message is ToolResultMessage => message.role === 'toolResult',
    );
    expect(JSON.stringify(results[0]?.content)).toContain('no shell today');
    expect(results[1]?.isError).toBe(false);
    const events = (await readFile(seen, 'utf8'))
      .trim()
      .split('\n')
      .map(
        (line) => JSON.parse(line) as { tool_name: string; tool_input: Record<string, unknown> },
      );
    // Read matched neither hook; Write matched "Edit|Write", and got Claude Code's file_path too.
    expect(events.map((event) => event.tool_name)).toEqual(['bash', 'write_file']);
    expect(events[1]?.tool_input).toEqual({ path: 'notes.md', file_path: 'notes.md' });
  });

  it('mcp__server__.* selects that server’s tools by their source, whatever their wire names', async () => {
    const seen = join(dir, 'mcp.jsonl');
    const record = join(dir, 'mcp.mjs');
    await writeFile(
      record,
      `import { appendFileSync } from 'node:fs';
let input = ''; process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', () => appendFileSync(${JSON.stringify(seen)}, JSON.parse(input).tool_name + '\\n'));`,
    );
    const hooks = new CommandHooks(
      parseHooksConfig({
        PostToolUse: [
          {
            matcher: 'mcp__github__.*',
            hooks: [
              {
                type: 'command',
                command: `${JSON.stringify(process.execPath)} ${JSON.stringify(record)}`,
              },
            ],
          },
        ],
      }),
      { cwd: dir },
    );
    const provider = createScriptedProvider([
      {
        toolCalls: [
          { name: 'github__search', arguments: { q: 'a' } },
          { name: 'list_issues', arguments: { q: 'b' } },
          { name: 'gitlab__search', arguments: { q: 'c' } },
        ],
      },
      { text: 'done' },
    ]);
    const agent = new Agent({
      provider,
      model: 'm',
      tools: [
        mcpTool('github__search', 'mcp:github'),
        mcpTool('list_issues', 'mcp:github'),
        mcpTool('gitlab__search', 'mcp:gitlab'),
      ],
      hooks: hooks.agentHooks,
      toolExecution: { type: 'sequential' },
    });
    await agent.run('go').result;
    expect((await readFile(seen, 'utf8')).trim().split('\n')).toEqual([
      'github__search',
      'list_issues',
    ]);
  });
});
