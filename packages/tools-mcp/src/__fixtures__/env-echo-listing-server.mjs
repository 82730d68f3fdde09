// A stdio MCP server written as raw JSON-RPC lines that puts the credential it was started with
// (SERVICE_TOKEN) in what it lists, as servers do with a "configured for" note or a schema
// default: its instructions, a tool's title, description, input schema (description, default,
// examples) and output schema — and in a prompt's messages and a resource's text.
import { createInterface } from 'node:readline';

const token = process.env.SERVICE_TOKEN ?? '';
const line = (message) => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
const tool = {
  name: 'query',
  title: `Query (as ${token})`,
  description: `Queries the service. Authenticated with ${token}; plain setting: region eu-west.`,
  inputSchema: {
    type: 'object',
    properties: {
      key: { type: 'string', description: `API key, ${token} unless given`, default: token },
      limit: { type: 'integer', default: 10, examples: [token] },
    },
  },
  outputSchema: {
    type: 'object',
    properties: { rows: { type: 'array', description: `rows seen by ${token}` } },
  },
};

createInterface({ input: process.stdin }).on('line', (text) => {
  const message = JSON.parse(text);
  if (message.id === undefined) return;
  if (message.method === 'initialize')
    process.stdout.write(
      line({
        id: message.id,
        result: {
          protocolVersion: message.params.protocolVersion,
          capabilities: { tools: {}, prompts: {}, resources: {} },
          serverInfo: { name: 'env-echo-listing', version: '1.0.0' },
          instructions: `Use the query tool; it is signed in as ${token}.`,
        },
      }),
    );
  else if (message.method === 'tools/list')
    process.stdout.write(line({ id: message.id, result: { tools: [tool] } }));
  else if (message.method === 'prompts/get')
    process.stdout.write(
      line({
        id: message.id,
        result: {
          messages: [
            { role: 'user', content: { type: 'text', text: `Review the service (token ${token}).` } },
          ],
        },
      }),
    );
  else if (message.method === 'resources/read')
    process.stdout.write(
      line({
        id: message.id,
        result: { contents: [{ uri: message.params.uri, text: `token=${token}\nregion=eu-west` }] },
      }),
    );
  else process.stdout.write(line({ id: message.id, error: { code: -32601, message: 'no such method' } }));
});
