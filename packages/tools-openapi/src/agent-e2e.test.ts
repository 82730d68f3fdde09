import { Agent, type PermissionRequest, type ToolResultMessage } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiToolAdapter } from './openapi-tool-adapter.js';
import { fixture } from './test-helpers.js';
import { type PetstoreServer, startPetstoreServer } from './test-petstore-server.js';

let server: PetstoreServer;
beforeAll(async () => {
  server = await startPetstoreServer();
});
afterAll(async () => {
  await server.close();
});

describe('OpenAPI tools in the agent loop', () => {
  it('gives bad arguments core’s invalid-args result, runs good calls against the server, and shows a 404 to the model', async () => {
    const adapter = OpenApiToolAdapter.fromString(fixture('petstore-3.0.yaml'), {
      serverVariables: { port: String(server.port) },
      include: ['tag:pets'],
      exclude: ['DELETE /pets/*'],
    });
    const provider = createScriptedProvider([
      {
        toolCalls: [
          { id: 'bad', name: 'showPetById', arguments: { petId: 'one' } },
          { id: 'good', name: 'showPetById', arguments: { petId: 1 } },
          { id: 'missing', name: 'showPetById', arguments: { petId: 999 } },
        ],
      },
      { text: 'Rex is the only pet I found.' },
    ]);
    const permissionRequests: PermissionRequest[] = [];
    const agent = new Agent({
      provider,
      model: 'scripted',
      tools: adapter.tools,
      permissionGate: (request) => {
        permissionRequests.push(request);
        return { behavior: 'allow' };
      },
    });
    const before = server.requests.length;
    const result = await agent.run('Tell me about pets 1 and 999.').result;

    expect(result.stopReason).toBe('completed');
    expect(provider.requests[0]?.tools?.map((tool) => tool.name)).toEqual([
      'listPets',
      'createPet',
      'searchPets',
      'showPetById',
    ]);
    const results = result.messages.filter(
      (message): message is ToolResultMessage => message.role === 'toolResult',
    );
    const byId = new Map(results.map((message) => [message.toolCallId, message]));
    const text = (id: string) =>
      (byId.get(id)?.content ?? [])
        .map((block) => (block.type === 'text' ? block.text : ''))
        .join('');

    expect(byId.get('bad')).toMatchObject({ isError: true, errorKind: 'invalid-args' });
    expect(text('bad')).toMatch(/^Invalid arguments: at "petId": /);
    expect(byId.get('good')?.isError).toBe(false);
    // A whole JSON body reaches the model as a JSON block after the untrusted-content note.
    expect(text('good')).toMatch(/^Untrusted: the JSON below comes from the API "/);
    expect(byId.get('good')?.content.find((block) => block.type === 'json')).toMatchObject({
      value: { id: 1, name: 'Rex' },
    });
    expect(byId.get('missing')?.isError).toBe(true);
    expect(text('missing')).toContain('HTTP 404 Not Found (Pet not found)');
    expect(text('missing')).toContain('Pet 999 not found');

    // Only the two valid calls reached the server; the model saw both results in its next request.
    expect(server.requests.slice(before).map((request) => request.url)).toEqual(
      expect.arrayContaining(['/v1/pets/1', '/v1/pets/999']),
    );
    expect(server.requests.length - before).toBe(2);
    const secondTurn = provider.requests[1]?.messages ?? [];
    expect(secondTurn.filter((message) => message.role === 'toolResult')).toHaveLength(3);

    expect(permissionRequests.map((request) => [request.tier, ...request.subjects])).toEqual([
      ['read-only', 'GET /pets/{petId}'],
      ['read-only', 'GET /pets/{petId}'],
    ]);
  });
});
