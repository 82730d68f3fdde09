// A stdio MCP server written as raw JSON-RPC lines (no SDK), for what the SDK's server does only
// by chance: one stdout write holding progress notifications and the result together, so the
// client reads them in one chunk. Tool:
//   progress-then-result   "step 1" and "step 2" progress, then the result, all in one write
//   progress-flood         3,000 progress notifications, then the result
//   allocate               fills `bytes` of memory (a server the sandbox's memory limit kills)
import { createInterface } from 'node:readline';

const tools = [
  { name: 'progress-then-result', inputSchema: { type: 'object' } },
  { name: 'progress-flood', inputSchema: { type: 'object' } },
  { name: 'allocate', inputSchema: { type: 'object', properties: { bytes: { type: 'number' } } } },
];

const line = (message) => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;

const input = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
input.on('line', (text) => {
  const message = JSON.parse(text);
  if (message.id === undefined) return;
  const { id, method, params } = message;
  if (method === 'initialize') {
    process.stdout.write(
      line({
        id,
        result: {
          protocolVersion: params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'raw-stdio', version: '1.0.0' },
        },
      }),
    );
  } else if (method === 'tools/list') {
    process.stdout.write(line({ id, result: { tools } }));
  } else if (method === 'tools/call' && params.name === 'progress-then-result') {
    const progressToken = params._meta?.progressToken;
    const progress = (n) =>
      line({
        method: 'notifications/progress',
        params: { progressToken, progress: n, total: 2, message: `step ${n}` },
      });
    process.stdout.write(
      progress(1) + progress(2) + line({ id, result: { content: [{ type: 'text', text: 'done' }] } }),
    );
  } else if (method === 'tools/call' && params.name === 'progress-flood') {
    const progressToken = params._meta?.progressToken;
    let text = '';
    for (let n = 1; n <= 3000; n++)
      text += line({
        method: 'notifications/progress',
        params: { progressToken, progress: n, total: 3000, message: `step ${n}` },
      });
    process.stdout.write(text + line({ id, result: { content: [{ type: 'text', text: 'flooded' }] } }));
  } else if (method === 'tools/call' && params.name === 'allocate') {
    const filled = Buffer.alloc(Number(params.arguments?.bytes ?? 0), 1);
    process.stdout.write(
      line({ id, result: { content: [{ type: 'text', text: `allocated ${filled.length}` }] } }),
    );
  } else {
    process.stdout.write(line({ id, error: { code: -32601, message: `no ${method}` } }));
  }
});
