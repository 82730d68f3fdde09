// A tiny stdio MCP server for the failure tests, written on the SDK's low-level Server so the
// tool definitions go on the wire exactly as written here (raw JSON Schema, $refs, annotations).
// It can die mid-call, wait for cancellation, count calls, change its tool list and spawn a
// grandchild. Behaviour switches come from the environment:
//   FLAKY_DIE_ON_START=<code>  exit with that code before the handshake (after a line on stderr)
//   FLAKY_COLLIDE=1            also list "x.y" and "x_y" (same wire name once sanitised)
import { spawn } from 'node:child_process';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';

if (process.env.FLAKY_DIE_ON_START !== undefined) {
  process.stderr.write('flaky: refusing to start: missing FLAKY_TOKEN\n');
  process.exit(Number(process.env.FLAKY_DIE_ON_START));
}

const server = new Server(
  { name: 'flaky', version: '1.0.0' },
  { capabilities: { tools: { listChanged: true } } },
);

let calls = 0;
const extraTools = new Map();

const baseTools = [
  {
    name: 'big',
    description: 'Returns a text of the given size in MiB.',
    inputSchema: { type: 'object', properties: { mib: { type: 'number' } } },
  },
  {
    name: 'progress-then-done',
    description: 'Reports progress twice, the last right before its result.',
    inputSchema: { type: 'object' },
  },
  {
    name: 'echo',
    title: 'Echo',
    description: 'Echoes the text back.',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { text: { $ref: '#/$defs/text' } },
      required: ['text'],
      additionalProperties: false,
      $defs: { text: { type: 'string', minLength: 1 } },
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'die',
    description: 'Writes to stderr, reports progress, then exits mid-call with the given code.',
    inputSchema: {
      type: 'object',
      properties: { code: { type: 'integer' }, stderr: { type: 'string' } },
    },
    annotations: { readOnlyHint: false, destructiveHint: false },
  },
  {
    name: 'wait-for-cancel',
    description: 'Never answers; logs "cancelled <reason>" to stderr when the client cancels.',
    inputSchema: { type: 'object' },
  },
  {
    name: 'count-calls',
    description: 'How many tools/call requests this process has received, this one included.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'add-tool',
    description: 'Adds a tool with the given name and announces the new list.',
    inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  },
  {
    name: 'remove-tool',
    description: 'Removes a tool (even a built-in one) without announcing it.',
    inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  },
  {
    name: 'spawn-grandchild',
    description: 'Starts a long-lived grandchild process and returns its pid.',
    inputSchema: { type: 'object' },
  },
  {
    name: 'odd-schema',
    description: 'Declares an input schema that is not an object schema.',
    inputSchema: { type: 'string' },
  },
  {
    name: `long-${'n'.repeat(80)}`,
    description: 'A tool whose name is too long for a wire name.',
    inputSchema: { type: 'object' },
  },
];

const removed = new Set();

function listedTools() {
  const tools = [...baseTools, ...extraTools.values()].filter((tool) => !removed.has(tool.name));
  if (process.env.FLAKY_COLLIDE === '1') {
    tools.push(
      { name: 'x.y', inputSchema: { type: 'object' } },
      { name: 'x_y', inputSchema: { type: 'object' } },
    );
  }
  return tools;
}

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listedTools() }));

server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  calls++;
  const { name, arguments: args = {} } = request.params;
  const progressToken = request.params._meta?.progressToken;
  const progress = (value, total, message) =>
    progressToken === undefined
      ? Promise.resolve()
      : extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress: value, total, message },
        });
  if (removed.has(name) || !listedTools().some((tool) => tool.name === name)) {
    throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  }
  switch (name) {
    case 'big': {
      const mib = Number(request.params.arguments?.mib ?? 1);
      return { content: [{ type: 'text', text: 'x'.repeat(Math.round(mib * 1024 * 1024)) }] };
    }
    case 'progress-then-done':
      // The last progress notification goes out right before the result, in one write burst.
      await progress(1, 2, 'half way');
      await progress(2, 2, 'all done');
      return { content: [{ type: 'text', text: 'finished' }] };
    case 'echo':
      if (typeof args.text !== 'string') {
        throw new McpError(ErrorCode.InvalidParams, 'text must be a string');
      }
      return { content: [{ type: 'text', text: `echo: ${args.text}` }] };
    case 'die':
      process.stderr.write(args.stderr ?? 'flaky: about to die\n');
      await progress(1, 2, 'dying');
      // Exit only once the progress line has left, so the client has seen the call start.
      process.stdout.write('', () => process.exit(args.code ?? 3));
      return new Promise(() => {});
    case 'wait-for-cancel':
      await progress(0, undefined, 'waiting for cancellation');
      return new Promise((resolve) => {
        extra.signal.addEventListener('abort', () => {
          process.stderr.write(`cancelled ${String(extra.signal.reason)}\n`);
          resolve({ content: [{ type: 'text', text: 'late answer' }] });
        });
      });
    case 'count-calls':
      return { content: [{ type: 'text', text: String(calls) }] };
    case 'add-tool':
      extraTools.set(args.name, {
        name: args.name,
        description: `Added at run time: ${args.name}`,
        inputSchema: { type: 'object' },
      });
      await server.sendToolListChanged();
      return { content: [{ type: 'text', text: `added ${args.name}` }] };
    case 'remove-tool':
      removed.add(args.name);
      return { content: [{ type: 'text', text: `removed ${args.name}` }] };
    case 'spawn-grandchild': {
      const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
        stdio: 'ignore',
      });
      return { content: [{ type: 'text', text: String(child.pid) }] };
    }
    default:
      return { content: [{ type: 'text', text: `${name} ran` }] };
  }
});

await server.connect(new StdioServerTransport());
