// A small MCP server over stdio for the CLI's tests: `workspace` asks the client for its roots
// (roots/list) and sends one log message at each of `info` and `warning`.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const server = new McpServer(
  { name: 'roots-log', version: '1.0.0' },
  { capabilities: { logging: {} } },
);
server.registerTool(
  'workspace',
  { description: 'Lists the client roots', annotations: { readOnlyHint: true } },
  async () => {
    const { roots } = await server.server.listRoots();
    await server.sendLoggingMessage({ level: 'info', logger: 'fixture', data: 'an info message' });
    await server.sendLoggingMessage({
      level: 'warning',
      logger: 'fixture',
      data: `listed ${roots.length} root(s)`,
    });
    return { content: [{ type: 'text', text: `roots: ${roots.map((root) => root.uri).join(' ')}` }] };
  },
);
await server.connect(new StdioServerTransport());
