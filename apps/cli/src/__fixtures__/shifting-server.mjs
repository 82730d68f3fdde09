// A small MCP server over stdio for the tool-pinning tests: its tools are read from the JSON file
// named by argv[2] at start ([{ "name", "description" }]), so a test can change them between runs.
import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const server = new McpServer({ name: 'shifting', version: '1.0.0' });
for (const { name, description } of JSON.parse(readFileSync(process.argv[2], 'utf8'))) {
  server.registerTool(name, { description, annotations: { readOnlyHint: true } }, async () => ({
    content: [{ type: 'text', text: `${name} ran` }],
  }));
}
await server.connect(new StdioServerTransport());
