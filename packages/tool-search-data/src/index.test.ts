import { Agent, type AnyAgentTool, ToolSearchIndex } from '@agent/core';
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
    // The intent lexicon (bench/src/tool-search/intent-lexicon): the user's words, slang and phrases.
    ['nuke', 'delete'],
    ['call_off', 'cancel'],
    ['money_back', 'refund'],
    ['repo', 'repository'],
  ])('relates "%s" to "%s"', (word, associate) => {
    const related = toolSearchAssociations()
      .related(word)
      .map((entry) => entry.term);
    expect(related).toContain(associate);
  });

  it('ranks the operation a slang or phrasal request means first', () => {
    const index = new ToolSearchIndex(
      [
        tool('webhooks_create', 'Create a webhook.'),
        tool('webhooks_list', 'List webhooks.'),
        tool('webhooks_delete', 'Delete a webhook.'),
        tool('charges_create', 'Create a charge.'),
        tool('refunds_create', 'Create a refund for a charge.'),
      ],
      { associations: toolSearchAssociations() },
    );
    expect(index.search('nuke the old webhook', 1)[0]?.name).toBe('webhooks_delete');
    expect(index.search('the customer wants their money back', 1)[0]?.name).toBe('refunds_create');
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
