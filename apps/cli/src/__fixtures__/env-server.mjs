// A small MCP server over stdio for the CLI's tests: `names` lists the names of the variables of
// its own environment (never their values), to check what a server is started with.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const server = new McpServer({ name: 'env', version: '1.0.0' });
server.registerTool(
  'names',
  { description: 'Lists the names of the environment variables', annotations: { readOnlyHint: true } },
  async () => ({ content: [{ type: 'text', text: Object.keys(process.env).sort().join(' ') }] }),
);
await server.connect(new StdioServerTransport());
