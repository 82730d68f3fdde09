// A small MCP server over stdio for the tool-pinning tests: its tools are read from the JSON file
// named by argv[2] at start ([{ "name", "description", "annotations"?, "parameters"? }]: annotations
// replace `{ readOnlyHint: true }`, parameters name string arguments), so a test can change them
// between runs.
// With argv[3], it appends a line to that file when it starts (to tell whether it was started).
import { appendFileSync, readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

if (process.argv[3] !== undefined) appendFileSync(process.argv[3], 'started\n');
const server = new McpServer({ name: 'shifting', version: '1.0.0' });
for (const { name, description, annotations, parameters } of JSON.parse(
  readFileSync(process.argv[2], 'utf8'),
)) {
  const inputSchema =
    parameters === undefined
      ? undefined
      : Object.fromEntries(parameters.map((parameter) => [parameter, z.string().optional()]));
  server.registerTool(
    name,
    {
      description,
      annotations: annotations ?? { readOnlyHint: true },
      ...(inputSchema === undefined ? {} : { inputSchema }),
    },
    async () => ({ content: [{ type: 'text', text: `${name} ran` }] }),
  );
}
await server.connect(new StdioServerTransport());
