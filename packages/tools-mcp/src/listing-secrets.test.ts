// The credentials configured for a server never reach the model through what the server lists:
// a stdio server started with a token in its environment that names it in its instructions, a
// tool's title, description or schemas (a "signed in as" note, a schema default of the key).
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { nodeServer } from './test-helpers.js';

const adapters: McpToolAdapter[] = [];
afterEach(async () => {
  await Promise.all(adapters.splice(0).map((adapter) => adapter.close()));
});

const serverEntry = fileURLToPath(
  new URL('./__fixtures__/env-echo-listing-server.mjs', import.meta.url),
);
const token = 'svc_9f8E7d6C5b4A3f2E1d0C9b8A7f6E5d4C';

describe('a server that lists the credential it was started with', () => {
  it('the instructions, title, description and schemas the model reads hold the marker', async () => {
    const adapter = await McpToolAdapter.connect({
      name: 'svc',
      transport: nodeServer(serverEntry, [], { env: { SERVICE_TOKEN: token } }),
    });
    adapters.push(adapter);
    const tool = adapter.tools().find((each) => each.name === 'svc__query');
    expect(tool).toBeDefined();
    const seen = {
      instructions: adapter.instructions ?? '',
      label: tool?.label ?? '',
      description: tool?.description ?? '',
      parameters: JSON.stringify(tool?.parameters),
      searchText: tool?.searchText ?? '',
    };
    for (const [where, text] of Object.entries(seen)) {
      expect(text.includes(token), `${where}: ${text}`).toBe(false);
      // tool_search's text of the output holds its property names only.
      if (where !== 'searchText') expect(text, where).toContain('[redacted:env SERVICE_TOKEN]');
    }
    // What is no credential is as the server listed it.
    expect(seen.description).toContain('plain setting: region eu-west.');
    expect(tool?.parameters).toMatchObject({
      properties: { limit: { type: 'integer', default: 10 }, key: { type: 'string' } },
    });
  });

  it("a prompt's messages (sent to the model as the user's) and a resource's text hold the marker", async () => {
    const adapter = await McpToolAdapter.connect({
      name: 'svc',
      transport: nodeServer(serverEntry, [], { env: { SERVICE_TOKEN: token } }),
    });
    adapters.push(adapter);
    const prompt = JSON.stringify(await adapter.getPrompt('review'));
    const resource = JSON.stringify(await adapter.readResource('svc://config'));
    for (const text of [prompt, resource]) {
      expect(text).not.toContain(token);
      expect(text).toContain('[redacted:env SERVICE_TOKEN]');
    }
    expect(prompt).toContain('Review the service (token [redacted:env SERVICE_TOKEN]).');
    expect(resource).toContain('region=eu-west');
  });
});
