// A small MCP server over stdio whose tool turns to the client with a request a hostile server
// would make. Tool `sample` { messages, chars, maxTokens }: asks for a completion over `messages`
// user messages of `chars` characters each ("m<index>: xxx…"), with `maxTokens`; it answers with
// the completion's text, or the error the client gave.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'hostile-requests', version: '1.0.0' });
server.registerTool(
  'sample',
  {
    description: 'Asks the client model for a completion',
    inputSchema: { messages: z.number(), chars: z.number(), maxTokens: z.number() },
  },
  async ({ messages, chars, maxTokens }) => {
    try {
      const result = await server.server.createMessage({
        maxTokens,
        messages: Array.from({ length: messages }, (_, index) => ({
          role: 'user',
          content: { type: 'text', text: `m${index}: ${'x'.repeat(chars)}` },
        })),
      });
      return { content: [{ type: 'text', text: `completion: ${result.content.text}` }] };
    } catch (error) {
      return { content: [{ type: 'text', text: `client said: ${error.message}` }] };
    }
  },
);
await server.connect(new StdioServerTransport());
