// A stdio MCP server written as raw JSON-RPC lines whose tools/list is hostile in the way its
// first argument names (the tool `fine` is always listed too, so the server stays usable):
//   schema-bomb     thirty definitions, each using the next twice: 2^30 nodes once inlined
//   schema-bombs    the same bomb in several shapes (items, allOf, properties, oneOf + siblings)
//   huge-description  a 5 MB description, a 100 kB title and 3 MB of instructions
//   huge-version    answers the handshake with a protocol version of 2 MB
//   many-tools      many pages of 1,000 tools each, for ever (a new cursor every page)
//   list-changed    tool `flood-changes` sends 300 notifications/tools/list_changed (and as many
//                   resources and prompts list_changed and resources/updated), 1 ms apart;
//                   the listing names how many listings were answered (`listed-<n>`)
//   silent          answers the handshake, never tools/list nor logging/setLevel
//   deep-schema     input and output schemas nested 100,000 levels deep (written as text: too
//                   deep for JSON.stringify)
//   proto-names     tool `proto` whose input schema names a property and a definition
//                   `__proto__` (required); a call answers with the arguments it got, as JSON
import { createInterface } from 'node:readline';

const scenario = process.argv[2];
const line = (message) => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
const fine = { name: 'fine', description: 'A well-behaved tool', inputSchema: { type: 'object' } };

/** `levels` definitions, each referring twice to the next, in the shape `wrap` gives a pair. */
function bomb(levels, wrap, root = 'properties') {
  const definitions = {};
  for (let level = 0; level < levels; level++) {
    const next = { $ref: `#/$defs/d${level + 1}` };
    definitions[`d${level}`] = wrap(next);
  }
  definitions[`d${levels}`] = { type: 'string' };
  const schema = { type: 'object', $defs: definitions };
  if (root === 'properties') schema.properties = { x: { $ref: '#/$defs/d0' } };
  else schema.allOf = [{ $ref: '#/$defs/d0' }];
  return schema;
}

let listings = 0;

function listing(cursor) {
  listings += 1;
  switch (scenario) {
    case 'list-changed':
      return {
        tools: [
          fine,
          { name: 'flood-changes', inputSchema: { type: 'object' } },
          { name: `listed-${listings}`, inputSchema: { type: 'object' } },
        ],
      };
    case 'schema-bomb':
      return { tools: [fine, { name: 'bomb', inputSchema: bomb(30, (next) => ({ anyOf: [next, next] })) }] };
    case 'schema-bombs':
      return {
        tools: [
          fine,
          { name: 'items', inputSchema: bomb(30, (next) => ({ type: 'array', items: [next, next] })) },
          { name: 'all-of', inputSchema: bomb(30, (next) => ({ allOf: [next, next] }), 'allOf') },
          {
            name: 'properties',
            inputSchema: bomb(30, (next) => ({ type: 'object', properties: { a: next, b: next } })),
          },
          {
            name: 'siblings',
            inputSchema: bomb(30, (next) => ({ oneOf: [next], not: next })),
          },
          {
            name: 'wide',
            inputSchema: bomb(3, (next) => ({ anyOf: Array.from({ length: 100 }, () => next) })),
          },
        ],
      };
    case 'huge-description':
      return {
        tools: [
          fine,
          {
            name: 'chatty',
            title: `T${'t'.repeat(100_000)}`,
            description: `Start. ${'x'.repeat(5_000_000)} End.`,
            inputSchema: { type: 'object' },
          },
        ],
      };
    case 'many-tools': {
      const page = Number(cursor ?? 0);
      const tools = Array.from({ length: 1000 }, (_, index) => ({
        name: `t${page}_${index}`,
        inputSchema: { type: 'object' },
      }));
      return { tools: page === 0 ? [fine, ...tools] : tools, nextCursor: String(page + 1) };
    }
    default:
      throw new Error(`unknown scenario ${scenario}`);
  }
}

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
          protocolVersion:
            scenario === 'huge-version' ? `v${'9'.repeat(2_000_000)}` : params.protocolVersion,
          capabilities:
            scenario === 'silent'
              ? { tools: {}, logging: {} }
              : { tools: { listChanged: true } },
          serverInfo: { name: 'hostile-listing', version: '1.0.0' },
          ...(scenario === 'huge-description'
            ? { instructions: `Begin. ${'y'.repeat(3_000_000)} End.` }
            : {}),
        },
      }),
    );
  } else if (scenario === 'silent') {
    // Never answers anything after the handshake.
  } else if (method === 'tools/list' && scenario === 'deep-schema') {
    const deep = `${'{"type":"object","properties":{"x":'.repeat(100_000)}{}${'}}'.repeat(100_000)}`;
    process.stdout.write(
      `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":[${JSON.stringify(fine)},{"name":"deep","inputSchema":${deep},"outputSchema":${deep}}]}}\n`,
    );
  } else if (method === 'tools/list' && scenario === 'proto-names') {
    // As text: in an object literal `__proto__` would set a prototype, not name a property.
    const schema =
      '{"type":"object","properties":{"__proto__":{"type":"string"},"a":{"$ref":"#/$defs/__proto__"}},"required":["__proto__"],"$defs":{"__proto__":{"type":"number"}}}';
    process.stdout.write(
      `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":[${JSON.stringify(fine)},{"name":"proto","inputSchema":${schema}}]}}\n`,
    );
  } else if (method === 'tools/list') {
    process.stdout.write(line({ id, result: listing(params?.cursor) }));
  } else if (method === 'tools/call' && params.name === 'flood-changes') {
    void (async () => {
      for (let index = 0; index < 300; index++) {
        process.stdout.write(
          line({ method: 'notifications/tools/list_changed' }) +
            line({ method: 'notifications/resources/list_changed' }) +
            line({ method: 'notifications/prompts/list_changed' }) +
            line({ method: 'notifications/resources/updated', params: { uri: 'res://x' } }),
        );
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      process.stdout.write(line({ id, result: { content: [{ type: 'text', text: 'changed' }] } }));
    })();
  } else if (method === 'tools/call' && params.name === 'proto') {
    const text = JSON.stringify(params.arguments);
    process.stdout.write(line({ id, result: { content: [{ type: 'text', text }] } }));
  } else if (method === 'tools/call') {
    process.stdout.write(line({ id, result: { content: [{ type: 'text', text: `called ${params.name}` }] } }));
  } else {
    process.stdout.write(line({ id, result: {} }));
  }
});
