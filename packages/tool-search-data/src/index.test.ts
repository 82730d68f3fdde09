import { Agent, type AnyAgentTool } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import { toolSearchAssociations } from './index.js';

function tool(name: string, description: string): AnyAgentTool {
  return {
    name,
    description,
    parameters: { type: 'object', properties: {} },
    defer: true,
    execute: async () => ({ content: [{ type: 'text', text: name }] }),
  };
}

describe('toolSearchAssociations', () => {
  it('parses the shipped data once and shares it', () => {
    const associations = toolSearchAssociations();
    expect(associations.size).toBeGreaterThan(10_000);
    expect(toolSearchAssociations()).toBe(associations);
  });

  it.each([
    ['remind', 'reminder'],
    ['picture', 'image'],
    ['bill', 'invoice'],
  ])('relates "%s" to "%s"', (word, associate) => {
    const related = toolSearchAssociations()
      .related(word)
      .map((entry) => entry.term);
    expect(related).toContain(associate);
  });

  it('lets tool_search find a tool described in other words than the request', async () => {
    const tools = [
      tool('reminders_add', 'Creates a reminder.'),
      tool('files_upload', 'Uploads a file.'),
      tool('users_setPhoto', 'Set the user profile photo.'),
    ];
    const provider = createScriptedProvider([
      { toolCalls: [{ name: 'tool_search', arguments: { query: 'change my picture', limit: 1 } }] },
      { text: 'done' },
    ]);
    const agent = new Agent({
      provider,
      model: 'test',
      tools,
      toolSearch: { associations: toolSearchAssociations() },
    });
    const state = await agent.run('go').result;
    const result = state.messages.find((message) => message.role === 'toolResult');
    expect(result?.role === 'toolResult' && result.details).toMatchObject({
      loaded: ['users_setPhoto'],
    });
  });
});
