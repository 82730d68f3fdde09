import * as fs from 'node:fs';
import * as path from 'node:path';
import { Agent, type PermissionRequest, ToolRegistry, type ToolResultMessage } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { type McpAgentTool, McpToolAdapter } from './mcp-tool-adapter.js';
import {
  makeTempDir,
  nodeServer,
  referenceServerEntry,
  resultText,
  testContext,
} from './test-helpers.js';

const onePixelPng =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

const adapters: McpToolAdapter[] = [];
const tempDirs: string[] = [];
afterEach(async () => {
  await Promise.all(adapters.splice(0).map((adapter) => adapter.close()));
  for (const dir of tempDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = makeTempDir();
  tempDirs.push(dir);
  return dir;
}

function byName(adapter: McpToolAdapter, wireName: string): McpAgentTool {
  const found = adapter.tools().find((candidate) => candidate.name === wireName);
  if (found === undefined) throw new Error(`no tool ${wireName}`);
  return found;
}

describe('McpToolAdapter with the filesystem reference server', () => {
  it('writes and reads real files, maps media to image and audio content, keeps errors as results', async () => {
    const root = tempDir();
    const outside = tempDir();
    fs.writeFileSync(path.join(root, 'pixel.png'), Buffer.from(onePixelPng, 'base64'));
    fs.writeFileSync(path.join(root, 'beep.wav'), Buffer.from('RIFF\0\0\0\0WAVEfmt '));
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    const fsServer = await McpToolAdapter.connect({
      name: 'fs',
      transport: nodeServer(referenceServerEntry('filesystem'), [root]),
    });
    adapters.push(fsServer);

    const read = byName(fsServer, 'fs__read_text_file');
    const write = byName(fsServer, 'fs__write_file');
    // readOnlyHint: parallel, but full-access for the gate (a server's claim is not a check).
    expect(read.policy).toEqual({ permission: 'full-access' });
    expect(write.policy?.permission).toBe('full-access');
    expect(write.policy?.exclusive).toBe(true);
    expect(byName(fsServer, 'fs__create_directory').policy?.exclusive).toBeUndefined();
    expect(write.permissionSubjects?.({})).toEqual(['fs/write_file']);

    const target = path.join(root, 'notes.txt');
    const written = await write.execute({ path: target, content: 'hello from MCP' }, testContext());
    expect(written.isError).toBeUndefined();
    expect(fs.readFileSync(target, 'utf8')).toBe('hello from MCP');
    expect(resultText(await read.execute({ path: target }, testContext()))).toBe('hello from MCP');

    const media = byName(fsServer, 'fs__read_media_file');
    const image = await media.execute({ path: path.join(root, 'pixel.png') }, testContext());
    expect(image.content).toEqual([{ type: 'image', data: onePixelPng, mimeType: 'image/png' }]);
    const audio = await media.execute({ path: path.join(root, 'beep.wav') }, testContext());
    expect(resultText(audio)).toBe('[Audio (audio/wav, 16 bytes): not shown to the model]');
    expect(audio.details?.content[0]).toMatchObject({ type: 'audio', mimeType: 'audio/wav' });

    const denied = await read.execute({ path: path.join(outside, 'secret.txt') }, testContext());
    expect(denied.isError).toBe(true);
    expect(resultText(denied)).toMatch(/Access denied/);
  });
});

describe('McpToolAdapter with the memory reference server, end to end through Agent', () => {
  it('runs a scripted conversation whose tool calls reach the real server', async () => {
    const dir = tempDir();
    const memoryFile = path.join(dir, 'memory.jsonl');
    const memory = await McpToolAdapter.connect({
      name: 'memory',
      transport: nodeServer(referenceServerEntry('memory'), [], {
        env: { MEMORY_FILE_PATH: memoryFile },
      }),
    });
    adapters.push(memory);
    const registry = new ToolRegistry();
    memory.syncToolRegistry(registry);
    expect(registry.select(['@mcp:memory']).size).toBe(memory.tools().length);

    const provider = createScriptedProvider([
      {
        toolCalls: [
          {
            name: 'memory__create_entities',
            arguments: {
              entities: [
                { name: 'Ada', entityType: 'person', observations: ['wrote the first program'] },
              ],
            },
          },
        ],
      },
      {
        toolCalls: [
          { name: 'memory__search_nodes', arguments: { query: 'Ada' } },
          { name: 'memory__read_graph', arguments: {} },
        ],
      },
      (request) => {
        const last = request.messages.at(-2);
        return { text: `Found: ${last?.role === 'toolResult' ? resultText(last) : '?'}` };
      },
    ]);
    const asked: Pick<PermissionRequest, 'toolName' | 'tier' | 'subjects'>[] = [];
    const agent = new Agent({
      provider,
      model: 'scripted',
      tools: registry,
      permissionGate: ({ toolName, tier, subjects }) => {
        asked.push({ toolName, tier, subjects });
        return { behavior: 'allow' };
      },
    });
    const run = agent.run('Remember Ada, then look her up.');
    const ended: string[] = [];
    for await (const event of run) {
      if (event.type === 'tool-execution-end' && !event.isError) ended.push(event.toolName);
    }
    const result = await run.result;

    expect(result.stopReason).toBe('completed');
    expect(ended.sort()).toEqual([
      'memory__create_entities',
      'memory__read_graph',
      'memory__search_nodes',
    ]);
    const toolResults = result.messages.filter(
      (message): message is ToolResultMessage => message.role === 'toolResult',
    );
    expect(toolResults.every((message) => !message.isError)).toBe(true);
    expect(result.finalMessage?.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringMatching(/^Found: .*"name": "Ada"/s),
    });
    expect(asked).toEqual([
      {
        toolName: 'memory__create_entities',
        tier: 'full-access',
        subjects: ['memory/create_entities'],
      },
      { toolName: 'memory__search_nodes', tier: 'full-access', subjects: ['memory/search_nodes'] },
      { toolName: 'memory__read_graph', tier: 'full-access', subjects: ['memory/read_graph'] },
    ]);
    expect(fs.readFileSync(memoryFile, 'utf8')).toMatch(/"name":"Ada"/);
  });
});
