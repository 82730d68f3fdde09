// A stdio MCP server written as raw JSON-RPC lines (no SDK) that sends what no client asked for.
// Tools:
//   stray          `count` messages of one `kind`, then the result "done":
//                    garbage       lines that are not JSON
//                    progress      progress for tokens it was never given
//                    response      answers to requests never made (with a large result)
//                    malformed     progress notifications that break their schema
//                    log           log messages (a notification the client handles)
//                    request       requests of a method the client does not know (each answered)
//   stop-reading   stops reading its input, then sends `count` pings (each answered) and never
//                  answers the call
//   ask-many       sends `count` elicitation/create requests at once; answers, when all came
//                  back, with how many were accepted and how many refused as JSON
import { createInterface } from 'node:readline';

const tools = [
  {
    name: 'stray',
    inputSchema: {
      type: 'object',
      properties: { kind: { type: 'string' }, count: { type: 'number' } },
    },
  },
  { name: 'stop-reading', inputSchema: { type: 'object', properties: { count: { type: 'number' } } } },
  { name: 'ask-many', inputSchema: { type: 'object', properties: { count: { type: 'number' } } } },
];
/** Answers to our own requests, by id. */
const waiting = new Map();

const line = (message) => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
const padding = 'x'.repeat(1_000);

const strays = {
  garbage: (n) => `not json, line ${n}\n`,
  progress: (n) =>
    line({ method: 'notifications/progress', params: { progressToken: `never-${n}`, progress: n } }),
  response: (n) => line({ id: 1_000_000 + n, result: { padding } }),
  malformed: (n) => line({ method: 'notifications/progress', params: { broken: n } }),
  log: (n) => line({ method: 'notifications/message', params: { level: 'info', data: `log ${n}` } }),
  request: (n) => line({ id: `stray-${n}`, method: 'stray/method', params: {} }),
};

const input = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
input.on('line', (text) => {
  const message = JSON.parse(text);
  if (message.id !== undefined && message.method === undefined) {
    waiting.get(message.id)?.(message);
    return;
  }
  if (message.id === undefined || message.method === undefined) return;
  const { id, method, params } = message;
  if (method === 'initialize') {
    process.stdout.write(
      line({
        id,
        result: {
          protocolVersion: params.protocolVersion,
          capabilities: { tools: {}, logging: {} },
          serverInfo: { name: 'stray-messages', version: '1.0.0' },
        },
      }),
    );
  } else if (method === 'tools/list') {
    process.stdout.write(line({ id, result: { tools } }));
  } else if (method === 'tools/call' && params.name === 'stray') {
    const { kind, count } = params.arguments;
    let text = '';
    for (let n = 1; n <= count; n++) text += strays[kind](n);
    process.stdout.write(text + line({ id, result: { content: [{ type: 'text', text: 'done' }] } }));
  } else if (method === 'tools/call' && params.name === 'ask-many') {
    const { count } = params.arguments;
    const answers = Array.from(
      { length: count },
      (_, n) =>
        new Promise((resolve) => {
          waiting.set(`ask-${n}`, resolve);
        }),
    );
    let text = '';
    for (let n = 0; n < count; n++)
      text += line({
        id: `ask-${n}`,
        method: 'elicitation/create',
        params: { message: `question ${n}`, requestedSchema: { type: 'object', properties: {} } },
      });
    process.stdout.write(text);
    void Promise.all(answers).then((all) => {
      const accepted = all.filter((answer) => answer.result?.action === 'accept').length;
      const refused = all.filter((answer) => answer.error !== undefined).length;
      process.stdout.write(
        line({ id, result: { content: [{ type: 'text', text: JSON.stringify({ accepted, refused }) }] } }),
      );
    });
  } else if (method === 'tools/call' && params.name === 'stop-reading') {
    input.close();
    process.stdin.pause();
    let text = '';
    for (let n = 1; n <= params.arguments.count; n++) text += line({ id: `ping-${n}`, method: 'ping' });
    process.stdout.write(text);
  } else {
    process.stdout.write(line({ id, error: { code: -32601, message: `no ${method}` } }));
  }
});
