import { Agent, messageText, type ToolResultMessage } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import {
  createAgentTool,
  createSubAgentTool,
  isSubAgentDetails,
  summaryToolName,
} from './index.js';
import { addTool, firstUserText, noteTool, toolResults } from './test-helpers.js';

function text(message: ToolResultMessage | undefined): string {
  return message === undefined ? '' : messageText(message);
}

/** Runs a parent whose only step calls `name` with `args`; returns the parent's tool results. */
async function callOnce(
  tools: ConstructorParameters<typeof Agent>[0]['tools'],
  name: string,
  args: Record<string, unknown>,
) {
  const parent = createScriptedProvider([
    { toolCalls: [{ id: 'call', name, arguments: args }] },
    { text: 'done' },
  ]);
  const result = await new Agent({ provider: parent, model: 'm', ...(tools ? { tools } : {}) }).run(
    'go',
  ).result;
  return toolResults(result.messages);
}

describe('Kiro’s summary tool for sub-agents', () => {
  it('the child reports with Kiro’s arguments; the report is the call’s result and ends the child', async () => {
    const child = createScriptedProvider([
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
      {
        toolCalls: [
          {
            name: summaryToolName,
            arguments: {
              taskDescription: 'test task',
              contextSummary: 'test context',
              taskResult: 'test result',
            },
          },
        ],
      },
      { text: 'never requested: the summary ended the run' },
    ]);
    const helper = createSubAgentTool({
      name: 'helper',
      description: 'Helps.',
      provider: child,
      model: 'm',
      tools: [addTool],
      summary: true,
    });
    const [result] = await callOnce([helper], 'helper', { task: 'Add 1 and 2.' });
    expect(result?.isError).toBe(false);
    expect(text(result)).toBe('test result\n\nContext: test context');
    expect(child.calls).toBe(2);
    expect(firstUserText(child.requests[0] ?? ({ messages: [] } as never))).toContain(
      'call the summary tool to report your result',
    );
    expect(child.requests[0]?.tools?.map((tool) => tool.name)).toEqual(['add', 'summary']);
    const details = result?.details;
    expect(isSubAgentDetails(details) && details.summary).toEqual({
      taskDescription: 'test task',
      contextSummary: 'test context',
      taskResult: 'test result',
    });
  });

  it('takes snake_case too; without context the result is the task result alone', async () => {
    const child = createScriptedProvider([
      {
        toolCalls: [
          {
            name: 'summary',
            arguments: { task_description: 'count', task_result: 'there are 3' },
          },
        ],
      },
    ]);
    const helper = createSubAgentTool({
      name: 'helper',
      description: 'Helps.',
      provider: child,
      model: 'm',
      summary: true,
    });
    const [result] = await callOnce([helper], 'helper', { task: 'Count.' });
    expect(text(result)).toBe('there are 3');
  });

  it('an invalid summary goes back to the child, which fixes it', async () => {
    const child = createScriptedProvider([
      { toolCalls: [{ name: 'summary', arguments: { taskDescription: 'x' } }] },
      { toolCalls: [{ name: 'summary', arguments: { taskDescription: 'x', taskResult: 'ok' } }] },
    ]);
    const helper = createSubAgentTool({
      name: 'helper',
      description: 'Helps.',
      provider: child,
      model: 'm',
      summary: true,
    });
    const [result] = await callOnce([helper], 'helper', { task: 'Do.' });
    expect(text(result)).toBe('ok');
    const childResults = child.requests[1]?.messages.filter((m) => m.role === 'toolResult');
    expect(childResults?.[0]).toMatchObject({ isError: true, errorKind: 'invalid-args' });
  });

  it('a child that ends without it is answered by its final text', async () => {
    const child = createScriptedProvider([{ text: 'Plain answer.' }]);
    const helper = createSubAgentTool({
      name: 'helper',
      description: 'Helps.',
      provider: child,
      model: 'm',
      summary: true,
    });
    const [result] = await callOnce([helper], 'helper', { task: 'Do.' });
    expect(result?.isError).toBe(false);
    expect(text(result)).toBe('Plain answer.');
  });

  it('refuses a child tool already named summary', () => {
    const own = { ...addTool, name: 'summary' };
    expect(() =>
      createSubAgentTool({
        name: 'helper',
        description: 'Helps.',
        provider: createScriptedProvider([]),
        model: 'm',
        tools: [own],
        summary: true,
      }),
    ).toThrow(/a child tool is named "summary"/);
  });
});

describe('claw-code’s Agent (and Claude Code’s Task): {description, prompt, subagent_type}', () => {
  function agents() {
    const explore = createScriptedProvider([{ text: 'Explored: tests pass.' }]);
    const general = createScriptedProvider([{ text: 'General answer.' }]);
    const tool = createAgentTool({
      agents: [
        createSubAgentTool({
          name: 'general-purpose',
          description: 'Does anything.',
          provider: general,
          model: 'm',
          tools: [noteTool([])],
        }),
        createSubAgentTool({
          name: 'Explore',
          description: 'Explores a codebase.\nMore lines.',
          provider: explore,
          model: 'm',
          policy: { permission: 'read-only' },
        }),
      ],
    });
    return { tool, explore, general };
  }

  it('runs claw-code’s example: the sub-agent named by subagent_type gets the prompt', async () => {
    const { tool, explore, general } = agents();
    const [result] = await callOnce([tool], 'Agent', {
      description: 'Audit the branch',
      prompt: 'Check tests and outstanding work.',
      subagent_type: 'Explore',
      name: 'ship-audit',
    });
    expect(result).toMatchObject({ toolName: 'agent', isError: false });
    expect(text(result)).toBe('Explored: tests pass.');
    expect(firstUserText(explore.requests[0] ?? ({ messages: [] } as never))).toBe(
      'Check tests and outstanding work.',
    );
    expect(general.calls).toBe(0);
    expect(isSubAgentDetails(result?.details) && result?.details.agentName).toBe('Explore');
  });

  it('without subagent_type the default runs; Task reaches it too', async () => {
    const { tool, general } = agents();
    const [result] = await callOnce([tool], 'Task', { description: 'Answer', prompt: 'Why?' });
    expect(text(result)).toBe('General answer.');
    expect(general.calls).toBe(1);
  });

  it.each([
    [{ description: '  ', prompt: 'Inspect' }, 'description must not be empty'],
    [{ description: 'Inspect branch', prompt: ' ' }, 'prompt must not be empty'],
    [
      { description: 'x', prompt: 'y', subagent_type: 'Plan' },
      'there is no sub-agent "Plan"; the sub-agents are: general-purpose, Explore',
    ],
  ])('refuses %j', async (args, message) => {
    const { tool } = agents();
    const [result] = await callOnce([tool], 'Agent', args);
    expect(result).toMatchObject({ isError: true, errorKind: 'invalid-args' });
    expect(text(result)).toContain(message);
  });

  it('lists the sub-agents for the model and takes the highest tier among them', () => {
    const { tool } = agents();
    expect(tool.description).toContain('- Explore: Explores a codebase.');
    expect(tool.description).not.toContain('More lines.');
    expect(tool.policy?.permission).toBe('workspace-write');
    expect(() => createAgentTool({ agents: [] })).toThrow(/at least one/);
    expect(() => createAgentTool({ agents: [addTool] })).toThrow(/not a sub-agent tool/);
  });
});
