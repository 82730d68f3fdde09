// A small MCP server over stdio for the CLI's tests: `names` lists the names of the variables of
// its own environment (never their values), to check what a server is started with. With
// `--stubborn` it ignores SIGTERM and keeps running when its stdin closes: only SIGKILL ends it;
// it then creates the file STUBBORN_READY_FILE names, once SIGTERM can no longer end it.
import { writeFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

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
await server.connect(new StdioServerTransport());
