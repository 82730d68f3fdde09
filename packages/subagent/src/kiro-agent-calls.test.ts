import { Agent, executeTool, messageText, type ToolResultMessage } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import { createAgentTool, createSubAgentTool } from './index.js';
import { firstUserText, toolResults } from './test-helpers.js';

// Kiro's sub-agent tools (use_subagent, delegate, and the newer subagent/agent_crew pipeline)
// called by those names with the arguments of Kiro's own tests and schemas.

function text(message: ToolResultMessage | undefined): string {
  return message === undefined ? '' : messageText(message);
}

/** Sub-agents whose model answers with its name and the task it was given. */
function echoAgents(names: readonly string[]) {
  const tasks: Record<string, string[]> = {};
  const agents = names.map((name) => {
    tasks[name] = [];
    const provider = createScriptedProvider(
      [
        (request) => {
          const task = firstUserText(request);
          tasks[name]?.push(task);
          return { text: `[${name}] did: ${task.split('\n')[0]}` };
        },
      ],
      { whenExhausted: 'repeat-last' },
    );
    return createSubAgentTool({ name, description: `The ${name} agent.`, provider, model: 'm' });
  });
  return { tool: createAgentTool({ agents }), tasks };
}

/** Runs a parent whose only step calls `name` with `args` (so nested runs go through ctx.callTool). */
async function callOnce(tool: ReturnType<typeof createAgentTool>, name: string, args: unknown) {
  const parent = createScriptedProvider([
    { toolCalls: [{ id: 'call', name, arguments: args as Record<string, unknown> }] },
    { text: 'done' },
  ]);
  const result = await new Agent({ provider: parent, model: 'm', tools: [tool] }).run('go').result;
  return toolResults(result.messages);
}

describe('use_subagent (Kiro CLI)', () => {
  it('InvokeSubagents with Kiro’s test arguments runs the named agent with the query and context', async () => {
    const { tool, tasks } = echoAgents(['general', 'test_agent']);
    const [result] = await callOnce(tool, 'use_subagent', {
      command: 'InvokeSubagents',
      content: {
        subagents: [
          { query: 'test query', agent_name: 'test_agent', relevant_context: 'test context' },
        ],
        convo_id: 'test_convo_id',
      },
    });
    expect(result).toMatchObject({ toolName: 'agent', isError: false });
    expect(text(result)).toBe('=== 1/1 test_agent ===\n[test_agent] did: test query');
    expect(tasks.test_agent?.[0]).toContain('test query\n\nContext:\ntest context');
    expect(tasks.general).toEqual([]);
  });

  it('several sub-agents run and report in order; the default agent when none is named', async () => {
    const { tool, tasks } = echoAgents(['general', 'reviewer']);
    const [result] = await callOnce(tool, 'subagent', {
      command: 'InvokeSubagents',
      content: {
        subagents: [
          { query: 'Summarise README.md' },
          {
            query: 'Review src/main.ts',
            agent_name: 'reviewer',
            dangerously_trust_all_tools: true,
          },
        ],
      },
    });
    expect(text(result)).toBe(
      '=== 1/2 general ===\n[general] did: Summarise README.md\n\n=== 2/2 reviewer ===\n[reviewer] did: Review src/main.ts',
    );
    expect([tasks.general?.length, tasks.reviewer?.length]).toEqual([1, 1]);
  });

  it('ListAgents lists the sub-agents', async () => {
    const { tool } = echoAgents(['general', 'reviewer']);
    const [result] = await callOnce(tool, 'use_subagent', { command: 'ListAgents' });
    expect(text(result)).toBe(
      'Sub-agents (default general):\n- general: The general agent.\n- reviewer: The reviewer agent.',
    );
  });

  it.each([
    [{ command: 'InvokeSubagents', content: { subagents: [] } }, /subagents/],
    [{ command: 'InvokeSubagents', content: { subagents: [{ query: '' }] } }, /query/],
    [
      {
        command: 'InvokeSubagents',
        content: { subagents: [{ query: 'x', agent_name: 'nobody' }] },
      },
      /no sub-agent "nobody"/,
    ],
    [{ command: 'Invoke' }, /expected one of/],
  ])('refuses %j', async (args, message) => {
    const { tool, tasks } = echoAgents(['general']);
    const [result] = await callOnce(tool, 'use_subagent', args);
    expect(result?.isError).toBe(true);
    expect(text(result)).toMatch(message);
    expect(tasks.general).toEqual([]);
  });
});

describe('delegate (Kiro CLI)', () => {
  it('launch runs the task to completion and says it was not in the background', async () => {
    const { tool, tasks } = echoAgents(['general', 'q_cli_default']);
    const [result] = await callOnce(tool, 'delegate', {
      operation: 'launch',
      agent: 'q_cli_default',
      task: 'Write the release notes',
    });
    expect(text(result)).toBe(
      'Sub-agent q_cli_default ran the task to completion (not in the background); its report:\n\n[q_cli_default] did: Write the release notes',
    );
    expect(tasks.q_cli_default).toHaveLength(1);
  });

  it('status (with null, as Kiro sends it) and list', async () => {
    const { tool } = echoAgents(['general']);
    const [status] = await callOnce(tool, 'delegate', {
      operation: { status: null },
      agent: null,
      task: null,
    });
    expect(text(status)).toMatch(/No background agents are running/);
    const [list] = await callOnce(tool, 'delegate', { operation: 'list' });
    expect(text(list)).toContain('- general: The general agent.');
    const [missing] = await callOnce(tool, 'delegate', { operation: 'launch' });
    expect(text(missing)).toMatch(/launch needs "task"/);
  });
});

describe('subagent / agent_crew (Kiro’s pipeline)', () => {
  it('runs the stages in dependency order, each with {task} filled in and its dependencies’ reports', async () => {
    const { tool, tasks } = echoAgents(['general', 'researcher', 'reviewer']);
    const [result] = await callOnce(tool, 'agent_crew', {
      task: 'Add a --json flag',
      mode: 'blocking',
      stages: [
        {
          name: 'research',
          role: 'researcher',
          prompt_template: 'Find where flags are parsed for: {task}',
        },
        {
          name: 'implement',
          role: 'implementer',
          prompt_template: 'Implement: {task}',
          depends_on: ['research'],
          model: 'x',
        },
        {
          name: 'review',
          role: 'reviewer',
          prompt_template: 'Review the change for: {task}',
          depends_on: ['implement'],
        },
      ],
    });
    expect(result?.isError).toBe(false);
    expect(text(result).match(/^=== .* ===$/gm)).toEqual([
      '=== 1/3 research (researcher) ===',
      '=== 2/3 implement (implementer) ===',
      '=== 3/3 review (reviewer) ===',
    ]);
    expect(tasks.researcher?.[0]).toContain('Find where flags are parsed for: Add a --json flag');
    // No sub-agent is called "implementer": the default one is told the role.
    expect(tasks.general?.[0]).toContain('Your role: implementer.');
    expect(tasks.general?.[0]).toContain(
      '--- research ---\n[researcher] did: Find where flags are parsed',
    );
    expect(tasks.reviewer?.[0]).toContain(
      '--- implement ---\n[general] did: Your role: implementer.',
    );
  });

  it.each([
    [
      [
        { name: 'a', role: 'r', prompt_template: 'x', depends_on: ['b'] },
        { name: 'b', role: 'r', prompt_template: 'y', depends_on: ['a'] },
      ],
      /cycle/,
    ],
    [
      [{ name: 'a', role: 'r', prompt_template: 'x', depends_on: ['ghost'] }],
      /"ghost", which is not a stage/,
    ],
    [
      [
        { name: 'a', role: 'r', prompt_template: 'x' },
        { name: 'a', role: 'r', prompt_template: 'y' },
      ],
      /share a name/,
    ],
  ])('refuses a bad pipeline %#, running nothing', async (stages, message) => {
    const { tool, tasks } = echoAgents(['general']);
    const [result] = await callOnce(tool, 'subagent', { task: 'T', stages });
    expect(text(result)).toMatch(message);
    expect(tasks.general).toEqual([]);
  });
});

describe('without the loop (executeTool straight on the tool)', () => {
  it('runs the sub-agent directly', async () => {
    const { tool } = echoAgents(['general']);
    const result = await executeTool(tool, {
      command: 'InvokeSubagents',
      content: { subagents: [{ query: 'Say hi' }] },
    });
    expect(text(result)).toBe('=== 1/1 general ===\n[general] did: Say hi');
  });

  it('our own shape is unchanged', async () => {
    const { tool, tasks } = echoAgents(['general']);
    const result = await executeTool(tool, { description: 'Greet', prompt: 'Say hello' });
    expect(text(result)).toBe('[general] did: Say hello');
    expect(tasks.general).toHaveLength(1);
  });
});
