import { getEventListeners } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import {
  Agent,
  ToolError,
  ToolRegistry,
  type ToolResultMessage,
  toolNamePattern,
} from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { McpToolsChange } from './mcp-options.js';
import { type McpAgentTool, McpToolAdapter } from './mcp-tool-adapter.js';
import {
  flakyServerEntry,
  isAlive,
  nextValue,
  nodeServer,
  processIds,
  resultText,
  testContext,
} from './test-helpers.js';

const open: McpToolAdapter[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((adapter) => adapter.close()));
});

async function connectFlaky(
  options: {
    name?: string;
    env?: Record<string, string>;
    onStderr?: (text: string) => void;
    maxMessageBytes?: number;
  } = {},
) {
  const errors: Error[] = [];
  const adapter = await McpToolAdapter.connect({
    name: options.name ?? 'flaky',
    transport: nodeServer(flakyServerEntry, [], {
      closeGraceMs: 200,
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.onStderr === undefined ? {} : { onStderr: options.onStderr }),
      ...(options.maxMessageBytes === undefined
        ? {}
        : { maxMessageBytes: options.maxMessageBytes }),
    }),
    onError: (error) => errors.push(error),
    // These tests measure what the transport carries, not what a model is given of it.
    maxResultChars: Number.POSITIVE_INFINITY,
  });
  open.push(adapter);
  const tool = (mcpName: string): McpAgentTool => {
    const found = adapter.tools().find((candidate) => candidate.name === `flaky__${mcpName}`);
    if (found === undefined) throw new Error(`no tool ${mcpName}`);
    return found;
  };
  return { adapter, tool, errors };
}

async function failure(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!ToolError.isInstance(error)) throw new Error(`expected a ToolError, got ${String(error)}`);
  return error;
}

describe('McpToolAdapter when the server fails (fixture server)', () => {
  it('fails a call in flight at once when the server exits, naming it, its exit code and stderr; the next call reconnects', async () => {
    const { adapter, tool, errors } = await connectFlaky();
    const firstPid = adapter.pid;
    const error = await failure(tool('die').execute({ code: 3 }, testContext()));
    expect(error.kind).toBe('failed');
    expect(error.message).toBe(
      'MCP server "flaky" stopped answering while "die" was running: it exited with code 3; its stderr ended with: flaky: about to die',
    );
    expect(adapter.status).toBe('disconnected');
    expect(errors.map((reported) => reported.message)).toContainEqual(
      expect.stringMatching(/exited with code 3.*the next call reconnects/s),
    );

    const echoed = await tool('echo').execute({ text: 'back' }, testContext());
    expect(resultText(echoed)).toBe('echo: back');
    expect(adapter.status).toBe('connected');
    expect(adapter.pid).not.toBe(firstPid);
    expect(isAlive(firstPid ?? -1)).toBe(false);
  });

  it('names the signal when the server is killed mid-call', async () => {
    const { adapter, tool } = await connectFlaky();
    const pid = adapter.pid ?? -1;
    const context = testContext({ onProgress: () => process.kill(pid, 'SIGKILL') });
    const error = await failure(tool('wait-for-cancel').execute({}, context));
    expect(error.kind).toBe('failed');
    expect(error.message).toBe(
      'MCP server "flaky" stopped answering while "wait-for-cancel" was running: it was killed by SIGKILL (no stderr output)',
    );
  });

  it('sends notifications/cancelled when a call is aborted, and the call ends as cancelled', async () => {
    let stderr = '';
    let sawCancel: () => void = () => {};
    const cancelledOnServer = new Promise<void>((resolve) => {
      sawCancel = resolve;
    });
    const { tool } = await connectFlaky({
      onStderr: (text) => {
        stderr += text;
        if (stderr.includes('cancelled')) sawCancel();
      },
    });
    const controller = new AbortController();
    const context = testContext({
      signal: controller.signal,
      onProgress: () => controller.abort(new Error('user pressed stop')),
    });
    const error = await failure(tool('wait-for-cancel').execute({}, context));
    expect(error.kind).toBe('cancelled');
    await cancelledOnServer;
    expect(stderr).toMatch(/cancelled user pressed stop/);
  });

  it('many calls on one long-lived signal add one abort listener to it, and its abort cancels them all', async () => {
    const { tool } = await connectFlaky();
    const controller = new AbortController();
    for (let index = 0; index < 50; index++) {
      const result = await tool('echo').execute(
        { text: `m${index}` },
        testContext({ signal: controller.signal }),
      );
      expect(resultText(result)).toContain(`m${index}`);
    }
    // The SDK never removes the listener it adds to a request's signal: each call gets its own.
    expect(getEventListeners(controller.signal, 'abort').length).toBe(1);
    let started = 0;
    let allStarted: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      allStarted = resolve;
    });
    const calls = Array.from({ length: 3 }, () =>
      failure(
        tool('wait-for-cancel').execute(
          {},
          testContext({
            signal: controller.signal,
            onProgress: () => {
              started += 1;
              if (started === 3) allStarted();
            },
          }),
        ),
      ),
    );
    await running;
    controller.abort(new Error('stop all'));
    for (const error of await Promise.all(calls)) expect(error.kind).toBe('cancelled');
    expect((await tool('echo').execute({ text: 'after' }, testContext())).content).toEqual([
      { type: 'text', text: expect.stringContaining('after') },
    ]);
  });

  it('reports a server that exits before the handshake with its exit code and stderr', async () => {
    const error = await McpToolAdapter.connect({
      name: 'broken',
      transport: nodeServer(flakyServerEntry, [], { env: { FLAKY_DIE_ON_START: '7' } }),
    }).catch((thrown: unknown) => thrown);
    expect(String(error)).toMatch(
      /Cannot connect to MCP server "broken": .*Connection closed.*the process exited with code 7; its stderr ended with:\nflaky: refusing to start: missing FLAKY_TOKEN/s,
    );
  });

  it('reports a command that does not exist', async () => {
    const error = await McpToolAdapter.connect({
      name: 'ghost',
      transport: { type: 'stdio', command: '/nonexistent/mcp-server' },
    }).catch((thrown: unknown) => thrown);
    expect(String(error)).toMatch(
      /Cannot connect to MCP server "ghost": spawn \/nonexistent\/mcp-server ENOENT/,
    );
  });

  it('refreshes on notifications/tools/list_changed, tells listeners, and keeps a synced registry in step', async () => {
    const { adapter, tool } = await connectFlaky();
    const registry = new ToolRegistry();
    const stopSync = adapter.syncToolRegistry(registry);
    expect(registry.has('flaky__echo')).toBe(true);
    const echoBefore = tool('echo');

    const changed = nextValue<{ tools: McpAgentTool[]; change: McpToolsChange }>((deliver) =>
      adapter.onToolsChanged((tools, change) => deliver({ tools, change })),
    );
    await tool('add-tool').execute({ name: 'fresh' }, testContext());
    const { tools, change } = await changed;
    expect(change).toEqual({ added: ['flaky__fresh'], removed: [], changed: [] });
    expect(tools.map((candidate) => candidate.name)).toContain('flaky__fresh');
    expect(registry.get('flaky__fresh')?.source).toBe('mcp:flaky');
    // Unchanged tools keep their identity, so registries and caches need not churn.
    expect(tool('echo')).toBe(echoBefore);
    expect(registry.get('flaky__echo')).toBe(echoBefore);
    expect(resultText(await tool('fresh').execute({}, testContext()))).toBe('fresh ran');

    stopSync();
    expect(registry.size).toBe(0);
  });

  it('maps JSON-RPC errors (unknown or removed tool → not-found, invalid params → invalid-args)', async () => {
    const { adapter, tool } = await connectFlaky();
    const unknown = await failure(adapter.callTool('nope', {}));
    expect(unknown.kind).toBe('not-found');
    expect(unknown.message).toMatch(/^Tool not found: MCP server "flaky" has no tool "nope"/);

    const invalid = await failure(tool('echo').execute({ text: 42 }, testContext()));
    expect(invalid.kind).toBe('invalid-args');
    expect(invalid.message).toBe('Invalid arguments: text must be a string');

    const countCalls = tool('count-calls');
    await tool('remove-tool').execute({ name: 'count-calls' }, testContext());
    const removed = await failure(countCalls.execute({}, testContext()));
    expect(removed.kind).toBe('not-found');
  });

  it('names tools safely: long names get a hash suffix, odd schemas become objects, $refs are inlined', async () => {
    const { adapter, tool } = await connectFlaky();
    const long = adapter.tools().find((candidate) => candidate.name.startsWith('flaky__long-'));
    expect(long?.name).toHaveLength(64);
    expect(long?.name).toMatch(/^flaky__long-n+_[0-9a-f]{8}$/);
    expect(long?.name).toMatch(toolNamePattern);
    expect(long?.label).toBe(`long-${'n'.repeat(80)}`);
    expect(long?.permissionSubjects?.({})).toEqual([`flaky/long-${'n'.repeat(80)}`]);
    expect(resultText(await (long as McpAgentTool).execute({}, testContext()))).toMatch(/ran$/);

    expect(tool('odd-schema').parameters).toEqual({ type: 'object' });
    expect(tool('echo').parameters).toEqual({
      type: 'object',
      properties: { text: { type: 'string', minLength: 1 } },
      required: ['text'],
      additionalProperties: false,
    });
  });

  it('refuses a tool list whose names collide once sanitised, with a clear error', async () => {
    const error = await McpToolAdapter.connect({
      name: 'flaky',
      transport: nodeServer(flakyServerEntry, [], { env: { FLAKY_COLLIDE: '1' } }),
    }).catch((thrown: unknown) => thrown);
    expect(String(error)).toMatch(
      /MCP server "flaky": tools "x.y" and "x_y" both get the wire name "flaky__x_y"; exclude one with toolFilter/,
    );
    const filtered = await McpToolAdapter.connect({
      name: 'flaky',
      transport: nodeServer(flakyServerEntry, [], { env: { FLAKY_COLLIDE: '1' } }),
      toolFilter: (definition) => definition.name !== 'x.y',
    });
    open.push(filtered);
    expect(filtered.tools().map((candidate) => candidate.name)).toContain('flaky__x_y');
  });

  it('close() stops the server and its process group, grandchildren included', async () => {
    const { adapter, tool } = await connectFlaky();
    const serverPid = adapter.pid ?? -1;
    const grandchild = Number(
      resultText(await tool('spawn-grandchild').execute({}, testContext())),
    );
    expect(isAlive(grandchild)).toBe(true);
    await adapter.close();
    expect(isAlive(serverPid)).toBe(false);
    // The grandchild is not our child: no exit event reaches us, so poll /proc until the SIGTERM lands.
    await vi.waitFor(() => expect(isAlive(grandchild)).toBe(false), { timeout: 5000 });
  });

  it('the process group stays in this session (its scheduling autogroup) where perl can set it, and close() still stops the grandchildren', async () => {
    const perl = process.env.PATH?.split(path.delimiter).some((dir) =>
      fs.existsSync(path.join(dir, 'perl')),
    );
    const adapter = await McpToolAdapter.connect({
      name: 'grouped',
      // Found through the server's PATH, as execvp would (the launcher checks it first).
      transport: {
        type: 'stdio',
        command: path.basename(process.execPath),
        args: [flakyServerEntry],
        env: { PATH: path.dirname(process.execPath) },
        closeGraceMs: 200,
      },
    });
    open.push(adapter);
    const pid = adapter.pid ?? -1;
    const server = processIds(pid);
    // A group of its own either way; a session of its own only without perl.
    expect(server.pgid).toBe(pid);
    expect(server.sid).toBe(perl === true ? processIds(process.pid).sid : pid);
    expect(server.tty).toBe(0);
    const spawnGrandchild = adapter
      .tools()
      .find((tool) => tool.name === 'grouped__spawn-grandchild');
    const grandchild = Number(
      resultText(await (spawnGrandchild as McpAgentTool).execute({}, testContext())),
    );
    expect(processIds(grandchild).pgid).toBe(pid);
    await adapter.close();
    expect(isAlive(pid)).toBe(false);
    await vi.waitFor(() => expect(isAlive(grandchild)).toBe(false), { timeout: 5000 });
  });

  it('processGroup: false starts the server as a plain child: it answers, and close() stops it (not its grandchildren)', async () => {
    const adapter = await McpToolAdapter.connect({
      name: 'plain',
      transport: nodeServer(flakyServerEntry, [], { processGroup: false, closeGraceMs: 200 }),
    });
    open.push(adapter);
    const tools = adapter.tools();
    const call = (name: string, args: Record<string, unknown>) => {
      const found = tools.find((candidate) => candidate.name === `plain__${name}`);
      if (found === undefined) throw new Error(`no tool ${name}`);
      return found.execute(args, testContext());
    };
    expect(resultText(await call('echo', { text: 'hi' }))).toContain('hi');
    const serverPid = adapter.pid ?? -1;
    const grandchild = Number(resultText(await call('spawn-grandchild', {})));
    await adapter.close();
    expect(isAlive(serverPid)).toBe(false);
    // Outside a group of its own, the grandchild outlives the server (the price of the option).
    expect(isAlive(grandchild)).toBe(true);
    process.kill(grandchild, 'SIGKILL');
  });

  it('lets the agent loop enforce timeoutMs, and the server is told to stop', async () => {
    let sawCancel: () => void = () => {};
    const cancelledOnServer = new Promise<void>((resolve) => {
      sawCancel = resolve;
    });
    const adapter = await McpToolAdapter.connect({
      name: 'flaky',
      transport: nodeServer(flakyServerEntry, [], {
        onStderr: (text) => {
          if (text.includes('cancelled')) sawCancel();
        },
      }),
      timeoutMs: 300,
    });
    open.push(adapter);
    const provider = createScriptedProvider([
      { toolCalls: [{ name: 'flaky__wait-for-cancel', arguments: {} }] },
      { text: 'gave up' },
    ]);
    const agent = new Agent({ provider, model: 'scripted', tools: adapter.tools() });
    const result = await agent.run('go').result;
    const toolResult = result.messages.find(
      (message): message is ToolResultMessage => message.role === 'toolResult',
    );
    expect(toolResult?.errorKind).toBe('timeout');
    expect(resultText(toolResult as ToolResultMessage)).toBe('Tool exceeded timeout of 300 ms');
    await cancelledOnServer;
  });

  it('ends calls in flight as cancelled when the adapter is closed', async () => {
    const { adapter, tool } = await connectFlaky();
    const context = testContext({ onProgress: () => void adapter.close() });
    const error = await failure(tool('wait-for-cancel').execute({}, context));
    expect(error.kind).toBe('cancelled');
    expect(error.message).toBe('Cancelled: the connection to MCP server "flaky" was closed');
  });

  it('catches bad arguments with core validation before they reach the server (through Agent)', async () => {
    const { adapter } = await connectFlaky();
    const provider = createScriptedProvider([
      { toolCalls: [{ name: 'flaky__echo', arguments: { text: 5 } }] },
      { toolCalls: [{ name: 'flaky__echo', arguments: { text: '' } }] },
      { toolCalls: [{ name: 'flaky__count-calls', arguments: {} }] },
      { text: 'done' },
    ]);
    const agent = new Agent({ provider, model: 'scripted', tools: adapter.tools() });
    const result = await agent.run('go').result;
    const toolResults = result.messages.filter(
      (message): message is ToolResultMessage => message.role === 'toolResult',
    );
    expect(toolResults.map((message) => message.errorKind)).toEqual([
      'invalid-args',
      'invalid-args',
      undefined,
    ]);
    expect(resultText(toolResults[0] as ToolResultMessage)).toMatch(
      /^Invalid arguments: at "text": expected string, received number 5/,
    );
    // Only count-calls itself reached the server.
    expect(resultText(toolResults[2] as ToolResultMessage)).toBe('1');
  });
});

describe('McpToolAdapter reconnecting (in-memory SDK server)', () => {
  it('reconnects lazily with bounded attempts and says so when the server stays away', async () => {
    let creates = 0;
    let server: McpServer | undefined;
    const adapter = await McpToolAdapter.connect({
      name: 'mem',
      transport: {
        type: 'custom',
        create: async () => {
          creates++;
          if (creates > 2) throw new Error('server unreachable');
          const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
          server = new McpServer({ name: 'mem', version: '1.0.0' });
          server.registerTool('ping', { description: 'Answers pong.' }, async () => ({
            content: [{ type: 'text', text: `pong ${creates}` }],
          }));
          await server.connect(serverSide);
          return clientSide;
        },
      },
      reconnect: { maxAttempts: 3, delayMs: 0 },
    });
    open.push(adapter);
    const [ping] = adapter.tools();
    if (ping === undefined) throw new Error('no tool');
    expect(resultText(await ping.execute({}, testContext()))).toBe('pong 1');

    await server?.close();
    expect(adapter.status).toBe('disconnected');
    // Reconnected lazily by the next call.
    expect(resultText(await ping.execute({}, testContext()))).toBe('pong 2');
    expect(creates).toBe(2);

    await server?.close();
    const error = await failure(ping.execute({}, testContext()));
    expect(error.kind).toBe('failed');
    expect(error.message).toMatch(
      /^MCP server "mem" is unavailable: 3 attempts to reconnect failed \(.*server unreachable\)/,
    );
    expect(creates).toBe(5);
  });

  it('a result over 10 MiB (the SDK reader’s limit) arrives whole', async () => {
    const { tool } = await connectFlaky();
    const result = await tool('big').execute({ mib: 12 }, testContext());
    expect(resultText(result).length).toBe(12 * 1024 * 1024);
  }, 60_000);

  it('a message over maxMessageBytes fails the call naming the limit (not a SIGTERM), then reconnects', async () => {
    const { adapter, tool, errors } = await connectFlaky({ maxMessageBytes: 1024 * 1024 });
    const error = await failure(tool('big').execute({ mib: 2 }, testContext()));
    expect(error.message).toContain('over the 1048576-byte limit');
    expect(error.message).toContain('raise maxMessageBytes');
    expect(error.message).not.toContain('SIGTERM');
    expect(errors.map((reported) => reported.message).join('\n')).toContain('1048576-byte limit');
    const small = await tool('big').execute({ mib: 0.5 }, testContext());
    expect(resultText(small).length).toBe(512 * 1024);
    expect(adapter.status).toBe('connected');
  }, 60_000);

  it('the last progress notification, sent right before the result, reaches onProgress', async () => {
    const { tool, errors } = await connectFlaky();
    for (let round = 0; round < 20; round++) {
      const context = testContext();
      const result = await tool('progress-then-done').execute({}, context);
      expect(resultText(result)).toBe('finished');
      expect(context.progress).toEqual([
        { text: expect.stringContaining('half way'), fraction: 0.5 },
        { text: expect.stringContaining('all done'), fraction: 1 },
      ]);
    }
    expect(errors.map((reported) => reported.message).join('\n')).not.toContain('unknown token');
  });
});
