// The conformance client (not published): the official MCP conformance suite starts it with the
// test server's URL as its last argument and the scenario in MCP_CONFORMANCE_SCENARIO. It uses
// the built adapter (`pnpm --filter @agent/tools-mcp build` first), nothing hand-rolled.
import { McpToolAdapter } from '../dist/index.js';

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';

// What each scenario's server expects the client to call.
const calls = {
  tools_call: [['add_numbers', { a: 2, b: 3 }]],
  'elicitation-sep1034-client-defaults': [['test_client_elicitation_defaults', {}]],
  'sse-retry': [['test_reconnection', {}]],
};

const adapter = await McpToolAdapter.connect({
  name: 'conformance',
  transport: { type: 'http', url },
  // A user who accepts without filling anything in: the schema's defaults apply (SEP-1034).
  elicitation: async () => ({ action: 'accept', content: {} }),
  sampling: async () => ({
    role: 'assistant',
    model: 'conformance',
    content: { type: 'text', text: 'ok' },
  }),
  onError: (error) => process.stderr.write(`${error.message}\n`),
});
try {
  for (const [tool, args] of calls[scenario] ?? []) {
    const result = await adapter.callTool(tool, args);
    process.stdout.write(`${tool}: ${JSON.stringify(result.content)}\n`);
  }
} finally {
  await adapter.close();
}
