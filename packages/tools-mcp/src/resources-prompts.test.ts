import { Agent } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type McpAgentTool, McpToolAdapter } from './mcp-tool-adapter.js';
import { nodeServer, referenceServerEntry, resultText, testContext } from './test-helpers.js';

// Resources, resource templates, prompts and completion of the official "everything" server.
describe('resources and prompts of the everything server (stdio)', () => {
  let adapter: McpToolAdapter;
  const tool = (name: string): McpAgentTool => {
    const found = adapter.tools().find((candidate) => candidate.name === `everything__${name}`);
    if (found === undefined) throw new Error(`no tool ${name}`);
    return found;
  };

  beforeAll(async () => {
    adapter = await McpToolAdapter.connect({
      name: 'everything',
      transport: nodeServer(referenceServerEntry('everything'), ['stdio']),
    });
  });
  afterAll(async () => {
    await adapter.close();
  });

  it('offers list_resources and read_resource as read-only tools', () => {
    for (const name of ['list_resources', 'read_resource']) {
      expect(tool(name).policy?.permission).toBe('read-only');
      expect(tool(name).source).toBe('mcp:everything');
    }
  });

  it('the model lists resources and templates, then reads one and a filled-in template', async () => {
    const listed = resultText(await tool('list_resources').execute({}, testContext()));
    expect(listed).toContain('Resources (read with read_resource):');
    expect(listed).toMatch(/demo:\/\/resource\/static\/document\//);
    expect(listed).toContain('demo://resource/dynamic/text/{resourceId}');

    const uri = /(demo:\/\/resource\/static\/document\/\S+)/.exec(listed)?.[1] ?? '';
    const document = resultText(await tool('read_resource').execute({ uri }, testContext()));
    expect(document.startsWith(`[${uri}`)).toBe(true);
    expect(document.length).toBeGreaterThan(uri.length + 10);

    const filled = resultText(
      await tool('read_resource').execute({ uri: 'demo://resource/dynamic/text/7' }, testContext()),
    );
    expect(filled).toContain('Resource 7: This is a plaintext resource');
  });

  it('a resource that does not exist is a readable error', async () => {
    await expect(
      tool('read_resource').execute({ uri: 'demo://nope/1' }, testContext()),
    ).rejects.toThrow(/MCP server "everything" could not read demo:\/\/nope\/1/);
  });

  it('through an agent: list, then read what was listed', async () => {
    const provider = createScriptedProvider([
      { toolCalls: [{ name: 'everything__list_resources', arguments: {} }] },
      {
        toolCalls: [
          {
            name: 'everything__read_resource',
            arguments: { uri: 'demo://resource/dynamic/text/3' },
          },
        ],
      },
      { text: 'read it' },
    ]);
    const agent = new Agent({ provider, model: 'm', tools: adapter.tools() });
    const result = await agent.run('what resources are there?').result;
    expect(result.stopReason).toBe('completed');
    const last = agent.messages.filter((message) => message.role === 'toolResult').at(-1);
    expect(JSON.stringify(last?.content)).toContain('Resource 3');
  });

  it('prompts for the application, filled in, and completion of their arguments', async () => {
    const prompts = await adapter.listPrompts();
    expect(prompts.prompts.map((prompt) => prompt.name)).toEqual(
      expect.arrayContaining(['simple-prompt', 'args-prompt', 'completable-prompt']),
    );
    const filled = await adapter.getPrompt('completable-prompt', {
      department: 'Engineering',
      name: 'Ada',
    });
    expect(JSON.stringify(filled.messages)).toContain(
      'Please promote Ada to the head of the Engineering team.',
    );
    const completion = await adapter.complete({
      ref: { type: 'ref/prompt', name: 'completable-prompt' },
      argument: { name: 'department', value: 'S' },
    });
    expect(completion.completion.values).toEqual(['Sales', 'Support']);
  });

  it('resourceTools: false leaves the resource tools out', async () => {
    const plain = await McpToolAdapter.connect({
      name: 'plain',
      transport: nodeServer(referenceServerEntry('everything'), ['stdio']),
      resourceTools: false,
    });
    try {
      expect(plain.tools().map((candidate) => candidate.name)).not.toContain(
        'plain__read_resource',
      );
    } finally {
      await plain.close();
    }
  });
});
