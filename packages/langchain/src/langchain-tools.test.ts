// Through the real LangChain: each tool is invoked the way a LangChain agent (ToolNode,
// createAgent) invokes it — `tool.invoke(toolCall, config)` — and bound the way a chat model binds it.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AgentEvent,
  defineTool,
  PermissionPolicy,
  type PermissionPolicyOptions,
  type PermissionRequest,
  renameArguments,
  ToolError,
  type ToolResultMessage,
} from '@agent/core';
import { createBashTool } from '@agent/tools-builtin';
import { ToolMessage } from '@langchain/core/messages';
import { ToolInputParsingException } from '@langchain/core/tools';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { toLangChainTool, toLangChainTools } from './langchain-tools.js';

function weatherTool() {
  const calls: unknown[] = [];
  const tool = defineTool({
    name: 'get_weather',
    description: 'Current weather for a city',
    input: z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']).optional() }),
    permissionSubjects: ({ city }) => [city],
    execute: async (args) => {
      calls.push(args);
      return {
        content: [{ type: 'text', text: `${args.city}: 18°C, sunny` }],
        details: { cached: false },
      };
    },
  });
  return { tool, calls };
}

const toolCall = (args: Record<string, unknown>, id = 'call_1') =>
  ({ type: 'tool_call', id, name: 'get_weather', args }) as const;

describe('toLangChainTools', () => {
  it('answers a tool call with a ToolMessage: content for the model, our result as artifact', async () => {
    const { tool, calls } = weatherTool();
    const [weather] = toLangChainTools([tool]);
    const message = await weather?.invoke(toolCall({ city: 'Paris' }));
    expect(ToolMessage.isInstance(message)).toBe(true);
    expect(message).toMatchObject({
      status: 'success',
      tool_call_id: 'call_1',
      name: 'get_weather',
      content: 'Paris: 18°C, sunny',
    });
    expect((message as ToolMessage).artifact).toMatchObject({
      role: 'toolResult',
      toolCallId: 'call_1',
      details: { cached: false },
    } satisfies Partial<ToolResultMessage>);
    expect(calls).toEqual([{ city: 'Paris' }]);
  });

  it('binds to a model with our JSON Schema', () => {
    const { tool } = weatherTool();
    const [weather] = toLangChainTools([tool]);
    if (weather === undefined) throw new Error('no tool');
    expect(convertToOpenAITool(weather)).toMatchObject({
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Current weather for a city',
        parameters: tool.parameters,
      },
    });
  });

  it.each([
    ['a number for a string', { city: 42 }, /at "city": expected string/],
    ['a value outside the enum', { city: 'Paris', unit: 'kelvin' }, /at "unit"/],
    ['the required key missing', {}, /city/],
    ['null for the object', null, /Invalid arguments/],
    ['an array for the object', ['Paris'], /Invalid arguments/],
  ])(
    'input that fails the schema (%s): a ToolMessage with status error the model reads, the tool never runs (before: ToolInputParsingException thrown)',
    async (_label, args, said) => {
      const { tool, calls } = weatherTool();
      const [weather] = toLangChainTools([tool]);
      const message = await weather?.invoke({
        type: 'tool_call',
        id: 'call_bad',
        name: 'get_weather',
        args: args as never,
      });
      expect(ToolMessage.isInstance(message)).toBe(true);
      expect(message).toMatchObject({
        status: 'error',
        tool_call_id: 'call_bad',
        name: 'get_weather',
      });
      expect(String((message as ToolMessage).content)).toMatch(/^Invalid arguments/);
      expect(String((message as ToolMessage).content)).toMatch(said);
      expect((message as ToolMessage).artifact).toMatchObject({
        errorKind: 'invalid-args',
        isError: true,
      });
      expect(calls).toEqual([]);
    },
  );

  it('input that fails the schema, invoked with plain arguments: throws our invalid-args ToolError', async () => {
    const { tool, calls } = weatherTool();
    const [weather] = toLangChainTools([tool]);
    const thrown = await weather?.invoke({ city: 42 } as never).catch((error: unknown) => error);
    expect(ToolError.isInstance(thrown)).toBe(true);
    expect(thrown).toMatchObject({ kind: 'invalid-args' });
    expect(thrown).not.toBeInstanceOf(ToolInputParsingException);
    expect(calls).toEqual([]);
  });

  it.each([
    ['a tool call', (args: Record<string, unknown>) => toolCall(args, 'call_p')],
    ['plain arguments', (args: Record<string, unknown>) => args],
  ])('prepareArguments runs before LangChain checks the schema (%s)', async (_label, input) => {
    const calls: unknown[] = [];
    const read = defineTool({
      name: 'read',
      description: 'Reads a file',
      input: z.object({ path: z.string() }),
      // Other agents' names for our argument, as the built-in file tools map them.
      prepareArguments: renameArguments({ file_path: 'path', filePath: 'path' }),
      execute: async (args) => {
        calls.push(args);
        return 'contents';
      },
    });
    const [tool] = toLangChainTools([read]);
    if (tool === undefined) throw new Error('no tool');
    expect(convertToOpenAITool(tool).function).toMatchObject({ parameters: read.parameters });
    for (const args of [{ file_path: 'a.txt' }, { filePath: 'b.txt' }, { path: 'c.txt' }]) {
      const answer = await tool?.invoke(input(args) as never);
      expect(ToolMessage.isInstance(answer) ? answer.content : answer).toBe('contents');
    }
    expect(calls).toEqual([{ path: 'a.txt' }, { path: 'b.txt' }, { path: 'c.txt' }]);
    // What prepareArguments cannot fix is refused as our loop refuses it.
    const refused = await tool
      ?.invoke(input({ file: 'd.txt' }) as never)
      .catch((error: unknown) => error);
    expect(ToolMessage.isInstance(refused) ? refused.status : (refused as ToolError).kind).toBe(
      ToolMessage.isInstance(refused) ? 'error' : 'invalid-args',
    );
    expect(calls).toEqual([{ path: 'a.txt' }, { path: 'b.txt' }, { path: 'c.txt' }]);
  });

  it('a prepareArguments that throws: the tool call is answered with the reason, not thrown', async () => {
    const read = defineTool({
      name: 'read',
      description: 'Reads a file',
      input: z.object({ path: z.string() }),
      prepareArguments: () => {
        throw new Error('cannot prepare');
      },
      execute: async () => 'contents',
    });
    const [tool] = toLangChainTools([read]);
    const message = await tool?.invoke(toolCall({ file_path: 'a.txt' }));
    expect(message).toMatchObject({ status: 'error' });
    expect(String((message as ToolMessage).content)).toContain('cannot prepare');
  });

  it('invoked with plain arguments, a failure throws our ToolError', async () => {
    const { tool } = weatherTool();
    const [weather] = toLangChainTools([tool], {
      permissions: new PermissionPolicy({ deny: ['get_weather'] }),
    });
    const failure = await weather?.invoke({ city: 'Paris' }).catch((error: unknown) => error);
    expect(ToolError.isInstance(failure)).toBe(true);
    expect((failure as ToolError).kind).toBe('denied');
  });

  it.each([
    ['a dot', ['get.weather']],
    ['a space', ['get weather']],
    ['a slash', ['tools/get_weather']],
    ['letters outside ASCII', ['météo']],
    ['65 characters', ['w'.repeat(65)]],
    ['an empty name', ['']],
    ['one of two that a framework would make alike', ['get_weather', 'get.weather']],
  ])(
    'a hand-made tool whose name the providers refuse (%s) is refused up front',
    (_label, names) => {
      const { tool } = weatherTool();
      const tools = names.map((name) => ({ ...tool, name }));
      const bad = names.find((name) => !/^[a-zA-Z0-9_-]{1,64}$/.test(name)) ?? '';
      expect(() => toLangChainTools(tools)).toThrow(`invalid tool name ${JSON.stringify(bad)}`);
      expect(() => toLangChainTool({ ...tool, name: bad })).toThrow('invalid tool name');
      // 64 characters of the allowed ones pass.
      expect(() => toLangChainTools([{ ...tool, name: 'w'.repeat(64) }])).not.toThrow();
    },
  );

  it('two tools of one name are refused up front', () => {
    const { tool } = weatherTool();
    expect(() => toLangChainTools([tool, tool])).toThrow('two tools are named "get_weather"');
  });
});

describe('toLangChainTools: the permission gate', () => {
  it.each([
    ['a deny rule', { deny: ['get_weather(Paris)'] }, 'Denied by rule "get_weather(Paris)"'],
    ['a disabled tool', { disabledTools: ['get_weather'] }, 'Tool "get_weather" is disabled'],
    ['an ask with nobody to ask', {}, 'needs approval; no approver configured'],
    ['an approver that says no', { approver: () => 'deny' }, 'Denied by the user'],
  ] as const)(
    '%s: a ToolMessage with status error, the tool never runs',
    async (_label, rules, reason) => {
      const { tool, calls } = weatherTool();
      const [weather] = toLangChainTools([tool], {
        permissions: new PermissionPolicy(rules as PermissionPolicyOptions),
      });
      const message = (await weather?.invoke(toolCall({ city: 'Paris' }))) as ToolMessage;
      expect(ToolMessage.isInstance(message)).toBe(true);
      expect(message.status).toBe('error');
      expect(message.tool_call_id).toBe('call_1');
      expect(message.content).toMatch(/^Permission denied: /);
      expect(message.content).toContain(reason);
      expect((message.artifact as ToolResultMessage).errorKind).toBe('denied');
      expect(calls).toEqual([]);
    },
  );

  it('an ask reaches our approver with the call; approved, the tool runs', async () => {
    const { tool, calls } = weatherTool();
    const asked: PermissionRequest[] = [];
    const [weather] = toLangChainTools([tool], {
      permissions: new PermissionPolicy({
        ask: ['get_weather(Oslo)'],
        mode: 'full-access',
        approver: (request) => {
          asked.push(request);
          return 'once';
        },
      }),
    });
    const message = (await weather?.invoke(toolCall({ city: 'Oslo' }, 'call_9'))) as ToolMessage;
    expect(message.status).toBe('success');
    expect(asked.map(({ toolCallId, args, subjects }) => ({ toolCallId, args, subjects }))).toEqual(
      [{ toolCallId: 'call_9', args: { city: 'Oslo' }, subjects: ['Oslo'] }],
    );
    expect(calls).toEqual([{ city: 'Oslo' }]);
  });
});

describe('toLangChainTools: the result budget, timeout and abort', () => {
  it('the content is clipped to maxResultChars; the artifact keeps the whole result', async () => {
    const big = defineTool({
      name: 'big',
      description: 'A long output',
      input: z.object({}),
      policy: { maxResultChars: 100 },
      execute: async () => `${'a'.repeat(3000)}${'z'.repeat(1000)}`,
    });
    const [tool] = toLangChainTools([big]);
    const message = (await tool?.invoke({
      type: 'tool_call',
      id: 'c',
      name: 'big',
      args: {},
    })) as ToolMessage;
    expect(message.content).toBe(
      `${'a'.repeat(75)}\n[… 3900 of 4000 characters clipped …]\n${'z'.repeat(25)}`,
    );
    expect(
      ((message.artifact as ToolResultMessage).content[0] as { text: string }).text,
    ).toHaveLength(4000);
  });

  it('a tool past its timeout: status error, kind timeout', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 'Waits for its signal',
      input: z.object({}),
      policy: { timeoutMs: 30 },
      execute: (_args, ctx) =>
        new Promise<string>((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve('stopped')),
        ),
    });
    const [tool] = toLangChainTools([slow]);
    const message = (await tool?.invoke({
      type: 'tool_call',
      id: 'c',
      name: 'slow',
      args: {},
    })) as ToolMessage;
    expect(message.status).toBe('error');
    expect(message.content).toBe('Tool exceeded timeout of 30 ms');
  });

  it("aborting the config's signal stops a running bash (its process is gone)", async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'langchain-bash-'));
    const marker = `${process.pid}${Date.now() % 100000}`;
    const controller = new AbortController();
    let ended: (event: AgentEvent) => void = () => {};
    const end = new Promise<AgentEvent>((resolve) => {
      ended = resolve;
    });
    try {
      const [bash] = toLangChainTools([createBashTool({ cwd, killGraceMs: 200 })], {
        onEvent: (event) => {
          if (event.type === 'tool-execution-end') ended(event);
        },
      });
      const running = bash
        ?.invoke(
          { type: 'tool_call', id: 'c', name: 'bash', args: { command: `sleep 3${marker}` } },
          { signal: controller.signal },
        )
        .catch((error: unknown) => error);
      await expect.poll(() => sleepers(marker), { timeout: 20_000 }).toBe(1);
      controller.abort();
      expect(await end).toMatchObject({
        type: 'tool-execution-end',
        isError: true,
        result: { content: [{ type: 'text', text: 'Cancelled' }] },
      });
      await running;
      expect(await sleepers(marker)).toBe(0);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});

/** Processes whose command line is `sleep 3<marker>` (the bash call's own child). */
async function sleepers(marker: string): Promise<number> {
  let count = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if ((await readFile(`/proc/${entry}/cmdline`, 'utf8')) === `sleep\u00003${marker}\u0000`)
        count++;
    } catch {
      // The process ended while we looked.
    }
  }
  return count;
}

describe('toLangChainTools: JSON content', () => {
  it('a JSON block reaches the model as its text, alone or beside an image', async () => {
    const stats = defineTool({
      name: 'stats',
      description: 'Counts',
      input: z.object({ withImage: z.boolean() }),
      execute: async ({ withImage }) => ({
        content: [
          { type: 'json', value: { files: 3 } },
          ...(withImage
            ? [{ type: 'image' as const, data: 'iVBORw0KGgo=', mimeType: 'image/png' }]
            : []),
        ],
      }),
    });
    const [tool] = toLangChainTools([stats]);
    const call = (withImage: boolean) =>
      tool?.invoke({ type: 'tool_call', id: 'c', name: 'stats', args: { withImage } });
    expect((await call(false))?.content).toBe('{\n  "files": 3\n}');
    expect((await call(true))?.content).toEqual([
      { type: 'text', text: '{\n  "files": 3\n}' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ]);
    // The artifact keeps the JSON block itself.
    expect(((await call(false)) as ToolMessage).artifact).toMatchObject({
      content: [{ type: 'json', value: { files: 3 } }],
    });
  });
});
