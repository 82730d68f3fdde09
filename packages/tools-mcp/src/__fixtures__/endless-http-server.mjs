// A Streamable HTTP MCP server (raw, stateless) whose answers do not end, for the client's size
// bound. Prints "listening on <port>" once it listens on 127.0.0.1. Tools:
//   endless-json      an application/json answer whose text never ends
//   endless-event     an event stream whose one event never ends
//   many-events       3,000 progress notifications of 1 kB each, then the result (CRLF lines)
//   small             "ok"
import { createServer } from 'node:http';

const tools = ['endless-json', 'endless-event', 'many-events', 'small'].map((name) => ({
  name,
  inputSchema: { type: 'object' },
}));
const json = (response, body) =>
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));

/** Writes `head`, then 1 MiB chunks of "x" for as long as the client reads. */
function endless(request, response, contentType, head) {
  response.writeHead(200, { 'content-type': contentType });
  response.write(head);
  const chunk = 'x'.repeat(1 << 20);
  let open = true;
  const pump = () => {
    while (open && response.write(chunk)) {}
  };
  response.on('drain', pump);
  response.on('close', () => {
    open = false;
  });
  pump();
}

const server = createServer(async (request, response) => {
  if (request.method !== 'POST') {
    response.writeHead(405).end();
    return;
  }
  let body = '';
  for await (const chunk of request) body += chunk;
  const message = JSON.parse(body);
  const { id, method, params } = message;
  if (id === undefined) {
    response.writeHead(202).end();
    return;
  }
  if (method === 'initialize') {
    json(response, {
      jsonrpc: '2.0',
      id,
      result: {
        protocolVersion: params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'endless-http', version: '1.0.0' },
      },
    });
  } else if (method === 'tools/list') {
    json(response, { jsonrpc: '2.0', id, result: { tools } });
  } else if (method === 'tools/call' && params.name === 'endless-json') {
    endless(request, response, 'application/json', `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`);
  } else if (method === 'tools/call' && params.name === 'endless-event') {
    endless(request, response, 'text/event-stream', `data: {"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`);
  } else if (method === 'tools/call' && params.name === 'many-events') {
    const progressToken = params._meta?.progressToken;
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const event = (data) => `event: message\r\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...data })}\r\n\r\n`;
    for (let n = 1; n <= 3000; n++) {
      response.write(
        event({
          method: 'notifications/progress',
          params: { progressToken, progress: n, total: 3000, message: 'y'.repeat(1000) },
        }),
      );
    }
    response.end(event({ id, result: { content: [{ type: 'text', text: 'all events' }] } }));
  } else if (method === 'tools/call') {
    json(response, { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'ok' }] } });
  } else {
    json(response, { jsonrpc: '2.0', id, result: {} });
  }
});
server.listen(0, '127.0.0.1', () => console.log(`listening on ${server.address().port}`));
