import * as fs from 'node:fs';
import * as http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Agent, type AnyAgentTool, sharedResourceLocks } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { BackgroundTasks, defaultTools } from '@agent/tools-builtin';
import { McpToolAdapter } from '@agent/tools-mcp';
import { OpenApiToolAdapter } from '@agent/tools-openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Many agents in one process drive real tools at once: bash, edits of one shared file, reads,
// searches, calls to one MCP server (server-everything over stdio) and to an OpenAPI-described
// HTTP server on 127.0.0.1. Every call must get exactly its own result; nothing may be lost or
// duplicated; processes, file descriptors, listeners and locks return to where they were, and
// memory to about its baseline. Scale: LOAD_AGENTS (CI default 40 agents × 6 calls).

const agents = Number(process.env.LOAD_AGENTS ?? 40);
const require = createRequire(import.meta.url);

let dir: string;
let server: http.Server;
let baseUrl: string;
let mcp: McpToolAdapter;
let tools: AnyAgentTool[];
const background = new BackgroundTasks();

function openFds(): number {
  return fs.readdirSync('/proc/self/fd').length;
}

function childProcesses(): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'latin1');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(fields[1]) === process.pid && fields[0] !== 'Z';
      } catch {
        return false;
      }
    })
    .map(Number);
}

const spec = {
  openapi: '3.1.0',
  info: { title: 'items', version: '1' },
  paths: {
    '/items/{id}': {
      get: {
        operationId: 'getItem',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'the item' } },
      },
    },
  },
};

beforeAll(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'load-suite-')));
  const slots = Array.from({ length: agents }, (_, index) => `slot-${index}`).join('\n');
  fs.writeFileSync(path.join(dir, 'shared.txt'), `${slots}\n`);
  for (let index = 0; index < agents; index++) {
    fs.writeFileSync(
      path.join(dir, `note-${index}.txt`),
      `note of agent ${index}\ntoken-${index}-x\n`,
    );
  }
  server = http.createServer((request, response) => {
    const id = /^\/items\/([^/?]+)/.exec(request.url ?? '')?.[1];
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ id, served: true }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await background.killAll();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('load: many agents, real tools, one process', () => {
  it(`${agents} agents × 6 parallel calls: every call gets exactly its own result; nothing leaks`, async () => {
    global.gc?.();
    const fdsBefore = openFds();
    const childrenBefore = childProcesses().length;
    const heapBefore = process.memoryUsage().heapUsed;

    mcp = await McpToolAdapter.connect({
      name: 'everything',
      transport: {
        type: 'stdio',
        command: process.execPath,
        args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js')],
      },
    });
    const api = OpenApiToolAdapter.fromSpec(spec, { name: 'items', baseUrl });
    tools = [
      // Unsandboxed: this suite is about the output path, locks and leaks at scale.
      ...defaultTools({
        cwd: dir,
        backgroundTasks: background,
        bash: { spillDir: path.join(dir, '.spill'), sandbox: 'off' },
      }),
      ...mcp.tools(),
      ...api.tools,
    ];
    const mcpEcho = tools.find((tool) => tool.name === 'everything__echo');
    const getItem = tools.find((tool) => tool.name.toLowerCase().includes('getitem'));
    if (mcpEcho === undefined || getItem === undefined)
      throw new Error('missing MCP or OpenAPI tool');

    const runs = Array.from({ length: agents }, (_, index) => {
      const calls = [
        { name: 'bash', arguments: { command: `echo out-${index}` } },
        {
          name: 'edit_file',
          arguments: {
            path: 'shared.txt',
            old_string: `slot-${index}\n`,
            new_string: `done-${index}\n`,
          },
        },
        { name: 'read_file', arguments: { path: `note-${index}.txt` } },
        { name: 'search', arguments: { pattern: `token-${index}-x`, output_mode: 'content' } },
        { name: mcpEcho.name, arguments: { message: `mcp-${index}` } },
        { name: getItem.name, arguments: { id: `item-${index}` } },
      ];
      const agent = new Agent({
        provider: createScriptedProvider([{ toolCalls: calls }, { text: 'done' }]),
        model: 'scripted',
        tools,
      });
      return agent.run('go').result;
    });
    const results = await Promise.all(runs);

    const wrong: string[] = [];
    results.forEach((result, index) => {
      expect(result.stopReason).toBe('completed');
      const messages = result.messages.filter((message) => message.role === 'toolResult');
      if (messages.length !== 6) wrong.push(`agent ${index}: ${messages.length} results`);
      const texts = messages.map((message) =>
        message.role === 'toolResult'
          ? message.content
              // An API's JSON body comes as a JSON block after its untrusted-content note.
              .map((part) =>
                part.type === 'text'
                  ? part.text
                  : part.type === 'json'
                    ? JSON.stringify(part.value)
                    : '',
              )
              .join('\n')
          : '',
      );
      const expected = [
        `out-${index}\n`,
        'Edited',
        `token-${index}-x`,
        `token-${index}-x`,
        `mcp-${index}`,
        `item-${index}`,
      ];
      expected.forEach((needle, call) => {
        const text = texts[call] ?? '';
        if (!text.includes(needle))
          wrong.push(`agent ${index} call ${call}: ${text.slice(0, 120)}`);
      });
      // Nobody else's output in this agent's results.
      const others = texts.join('\n').match(/out-(\d+)\n/g) ?? [];
      if (others.some((match) => match !== `out-${index}\n`))
        wrong.push(`agent ${index}: foreign output`);
    });
    expect(wrong).toEqual([]);

    // Every edit of the shared file landed, exactly once.
    const shared = fs.readFileSync(path.join(dir, 'shared.txt'), 'utf8').trim().split('\n');
    expect(shared).toEqual(Array.from({ length: agents }, (_, index) => `done-${index}`));

    await mcp.close();
    await background.killAll();
    expect(sharedResourceLocks.size).toBe(0);
    expect(childProcesses().length).toBe(childrenBefore);
    // Keep-alive HTTP connections are a pool, not a leak: once the server closes its idle ones,
    // the client's close too, and the descriptors come back.
    server.closeIdleConnections();
    const deadline = Date.now() + 10_000;
    while (openFds() > fdsBefore + 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(openFds()).toBeLessThanOrEqual(fdsBefore + 2);
    expect(process.listenerCount('exit')).toBeLessThan(20);
    tools = [];
    global.gc?.();
    const heapAfter = process.memoryUsage().heapUsed;
    // A tolerant bound: the run's garbage is gone, only caches (compiled schemas) remain.
    expect(heapAfter - heapBefore).toBeLessThan(64 * 1024 * 1024);
  });
});
