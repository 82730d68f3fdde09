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

// What some auth scenarios hand the client (a pre-registered client's credentials…).
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');

/** A user's browser that approves at once: follows the authorization redirects to our listener. */
async function browse(authorizationUrl) {
  let next = String(authorizationUrl);
  for (let hop = 0; hop < 10; hop++) {
    const response = await fetch(next, { redirect: 'manual' });
    const location = response.headers.get('location');
    await response.body?.cancel();
    if (location === null) return;
    next = new URL(location, next).href;
  }
}

const oauth = {
  openUrl: (authorizationUrl) => {
    void browse(authorizationUrl).catch((error) => process.stderr.write(`browser: ${error}\n`));
  },
  ...(context.client_id === undefined ? {} : { clientId: context.client_id }),
  ...(context.client_secret === undefined ? {} : { clientSecret: context.client_secret }),
  // Used as the client ID where the authorization server supports client ID metadata documents
  // (the suite's server does not fetch it); elsewhere the client registers dynamically.
  clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
  timeoutMs: 20_000,
};

// The client credentials scenarios: a secret, or a private key for a signed assertion.
const clientCredentials =
  scenario.startsWith('auth/client-credentials') && context.client_id !== undefined
    ? {
        clientId: context.client_id,
        ...(context.client_secret === undefined ? {} : { clientSecret: context.client_secret }),
        ...(context.private_key_pem === undefined
          ? {}
          : { privateKeyPem: context.private_key_pem, algorithm: context.signing_algorithm }),
      }
    : undefined;

const adapter = await McpToolAdapter.connect({
  name: 'conformance',
  transport: {
    type: 'http',
    url,
    ...(clientCredentials !== undefined
      ? { oauth: { clientCredentials } }
      : scenario.startsWith('auth/')
        ? { oauth }
        : {}),
  },
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
  // Auth scenarios check that an authorised client can list and call: call whatever is there.
  const planned =
    calls[scenario] ??
    (scenario.startsWith('auth/')
      ? adapter.tools().map((tool) => [tool.name.replace(/^conformance__/, ''), {}])
      : []);
  for (const [tool, args] of planned) {
    const result = await adapter.callTool(tool, args);
    process.stdout.write(`${tool}: ${JSON.stringify(result.content)}\n`);
  }
} finally {
  await adapter.close();
}
