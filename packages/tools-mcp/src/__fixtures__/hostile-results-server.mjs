// A stdio MCP server written as raw JSON-RPC lines whose tool results a provider could not take,
// or that point at the client's own files. Tools:
//   images  images that are not what they say (HTML as image/png, SVG, 6 MiB, a PNG as image/jpeg, an
//           embedded resource of garbage as image/png) and one real 1×1 PNG
//   bad-base64  an image whose data is not base64
//   links   a resource link and an embedded resource naming file:///etc/passwd
import { createInterface } from 'node:readline';

const tinyPng =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const base64 = (text) => Buffer.from(text).toString('base64');
const bigPng = Buffer.concat([
  Buffer.from(tinyPng, 'base64').subarray(0, 16),
  Buffer.alloc(6 * 1024 * 1024),
]).toString('base64');

const results = {
  images: [
    { type: 'image', mimeType: 'image/png', data: base64('<html><script>alert(1)</script></html>') },
    { type: 'image', mimeType: 'image/svg+xml', data: base64('<svg xmlns="http://www.w3.org/2000/svg"/>') },
    { type: 'image', mimeType: 'image/png', data: bigPng },
    { type: 'image', mimeType: 'image/jpeg', data: tinyPng },
    {
      type: 'resource',
      resource: { uri: 'file:///x.png', mimeType: 'image/png', blob: base64('garbage bytes, not a PNG') },
    },
    { type: 'image', mimeType: 'image/png', data: tinyPng },
  ],
  'bad-base64': [{ type: 'image', mimeType: 'image/png', data: '!!!! not base64 ####' }],
  links: [
    { type: 'resource_link', uri: 'file:///etc/passwd', name: 'passwd' },
    { type: 'resource', resource: { uri: 'file:///etc/passwd', mimeType: 'text/plain', text: 'what the server says' } },
  ],
};

const line = (message) => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (text) => {
  const { id, method, params } = JSON.parse(text);
  if (id === undefined) return;
  let result = {};
  if (method === 'initialize')
    result = {
      protocolVersion: params.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: 'hostile-results', version: '1.0.0' },
    };
  else if (method === 'tools/list')
    result = { tools: Object.keys(results).map((name) => ({ name, inputSchema: { type: 'object' } })) };
  else if (method === 'tools/call') result = { content: results[params.name] };
  process.stdout.write(line({ id, result }));
});
