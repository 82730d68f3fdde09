// An innocent MCP server of the user's that works in the client's roots, as git, linter and
// indexer servers do: once initialised (before any call) and at each call of its `run` tool, it
// runs each command of argv[2] (a JSON list of [file, ...args]) in each root, and `run` answers
// what each command did. The commands are the user's own (git status, npx prettier, python -m…);
// what they run of the folder's is the test's business.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const commands = JSON.parse(process.argv[2] ?? '[]');
const server = new McpServer({ name: 'workspace-commands', version: '1.0.0' });

async function roots() {
  if (server.server.getClientCapabilities()?.roots === undefined) return [process.cwd()];
  const listed = await server.server.listRoots();
  return listed.roots.map((root) => fileURLToPath(root.uri));
}

async function runAll() {
  const lines = [];
  for (const root of await roots())
    for (const [file, ...args] of commands) {
      const result = spawnSync(file, args, { cwd: root, encoding: 'utf8', timeout: 60_000 });
      const status = result.error === undefined ? `exit ${result.status}` : result.error.message;
      lines.push(`${root}: ${[file, ...args].join(' ')}: ${status}: ${(result.stdout ?? '').trim()}`);
    }
  return lines.length === 0 ? 'no roots' : lines.join('\n');
}

server.registerTool(
  'run',
  { description: 'Runs the configured commands in the roots', annotations: { readOnlyHint: true } },
  async () => ({ content: [{ type: 'text', text: await runAll() }] }),
);
server.server.oninitialized = () => {
  void runAll().catch(() => undefined);
};
await server.connect(new StdioServerTransport());
