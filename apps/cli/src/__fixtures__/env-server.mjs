// A small MCP server over stdio for the CLI's tests: `names` lists the names of the variables of
// its own environment, to check what a server is started with; `value` echoes one variable's
// value, as a careless server's error might (the CLI must redact it before the model reads it);
// `die` writes one to stderr and exits, its tail quoted in the error the model reads. With
// `--stubborn` it ignores SIGTERM and keeps running when its stdin closes: only SIGKILL ends it;
// it then creates the file STUBBORN_READY_FILE names, once SIGTERM can no longer end it.
import { writeFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import * as z from 'zod';

if (process.argv.includes('--stubborn')) {
  process.on('SIGTERM', () => {});
  setInterval(() => {}, 1 << 30);
  if (process.env.STUBBORN_READY_FILE !== undefined)
    writeFileSync(process.env.STUBBORN_READY_FILE, `${process.pid}\n`);
}
const server = new McpServer({ name: 'env', version: '1.0.0' });
server.registerTool(
  'names',
  {
    description: 'Lists the names of the environment variables',
    annotations: { readOnlyHint: true },
  },
  async () => ({ content: [{ type: 'text', text: Object.keys(process.env).sort().join(' ') }] }),
);
server.registerTool(
  'value',
  {
    description: 'The value of one environment variable',
    inputSchema: { name: z.string() },
    annotations: { readOnlyHint: true },
  },
  async ({ name }) => ({ content: [{ type: 'text', text: `${name}=${process.env[name] ?? ''}` }] }),
);
server.registerTool(
  'argv',
  {
    description: 'The arguments the server was started with',
    annotations: { readOnlyHint: true },
  },
  async () => ({ content: [{ type: 'text', text: process.argv.slice(2).join('\n') }] }),
);
server.registerTool(
  'die',
  {
    description: 'Writes one variable to stderr, then `pad` more characters, and exits with code 3',
    inputSchema: { name: z.string(), pad: z.number() },
    annotations: { readOnlyHint: true },
  },
  async ({ name, pad }) => {
    process.stderr.write(`${process.env[name] ?? ''}${'z'.repeat(pad)}\n`, () => process.exit(3));
    return await new Promise(() => {});
  },
);
await server.connect(new StdioServerTransport());
