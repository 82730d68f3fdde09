// A stdio MCP server written as raw JSON-RPC lines whose answers are too large for a model's
// request, or whose resource images a provider cannot take. Tools:
//   huge-text        one text block of 5,000,000 characters ("START…END")
//   many-texts       500 text blocks of 1,000 characters
//   many-images      30 real 1×1 PNG images
//   big-images       6 PNG images of 4.5 MiB each
//   huge-structured  no content, structured content holding 2,000,000 characters
// Resources: resources/list answers 200,000 resources in one page; resources/read of
//   svg://x        an image/svg+xml blob
//   fake-png://x   bytes that are not a PNG, as image/png
//   many://x       100 text contents of 100,000 characters
import { createInterface } from 'node:readline';

const tinyPng =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const bigPng = Buffer.concat([
  Buffer.from(tinyPng, 'base64').subarray(0, 16),
  Buffer.alloc(4.5 * 1024 * 1024 - 16),
]).toString('base64');
const base64 = (text) => Buffer.from(text).toString('base64');

const results = {
  'huge-text': () => ({ content: [{ type: 'text', text: `START${'a'.repeat(5_000_000)}END` }] }),
  'many-texts': () => ({
    content: Array.from({ length: 500 }, (_, index) => ({
      type: 'text',
      text: `${String(index).padStart(4, '0')}${'b'.repeat(996)}`,
    })),
  }),
  'many-images': () => ({
    content: Array.from({ length: 30 }, () => ({ type: 'image', mimeType: 'image/png', data: tinyPng })),
  }),
  'big-images': () => ({
    content: Array.from({ length: 6 }, () => ({ type: 'image', mimeType: 'image/png', data: bigPng })),
  }),
  'huge-structured': () => ({ content: [], structuredContent: { text: 'c'.repeat(2_000_000) } }),
};

const reads = {
  'svg://x': [{ uri: 'svg://x', mimeType: 'image/svg+xml', blob: base64('<svg xmlns="http://www.w3.org/2000/svg"/>') }],
  'fake-png://x': [{ uri: 'fake-png://x', mimeType: 'image/png', blob: base64('not a png at all') }],
  'many://x': Array.from({ length: 100 }, (_, index) => ({
    uri: `many://x/${index}`,
    mimeType: 'text/plain',
    text: 'd'.repeat(100_000),
  })),
};

const line = (message) => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (text) => {
  const { id, method, params } = JSON.parse(text);
  if (id === undefined) return;
  let result = {};
  if (method === 'initialize')
    result = {
      protocolVersion: params.protocolVersion,
      capabilities: { tools: {}, resources: {} },
      serverInfo: { name: 'oversized-results', version: '1.0.0' },
    };
  else if (method === 'tools/list')
    result = { tools: Object.keys(results).map((name) => ({ name, inputSchema: { type: 'object' } })) };
  else if (method === 'tools/call') result = results[params.name]();
  else if (method === 'resources/list')
    result = {
      resources: Array.from({ length: 200_000 }, (_, index) => ({
        uri: `many://x/${index}`,
        name: `resource number ${index}`,
      })),
    };
  else if (method === 'resources/templates/list') result = { resourceTemplates: [] };
  else if (method === 'resources/read') result = { contents: reads[params.uri] ?? [] };
  process.stdout.write(line({ id, result }));
});
