import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, cliPath, runCli, tempDir } from '../testing/test-support.js';

// MCP clients start a stdio server in a folder of their own choosing — Claude Desktop in `/`,
// others in the home folder. `agent mcp serve` took that folder for its workspace, so a client's
// read_file, glob and search reached every file of the user's (other projects, documents, other
// users' readable files) where the user meant to serve one project.

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function folders() {
  const dir = await tempDir('agent-mcp-serve-workspace-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const project = join(home, 'project');
  await mkdir(project, { recursive: true });
  await writeFile(join(home, 'diary.txt'), 'a file of the home, not of the project\n');
  await writeFile(join(project, 'notes.txt'), 'the project\n');
  return { home, project, env: cleanEnv({ HOME: home, AGENT_HOME: join(home, '.agent') }) };
}

/** The tools served when a client starts `agent mcp serve …args` in `cwd`, and one read. */
async function served(cwd: string, args: readonly string[], env: Record<string, string>) {
  const client = new Client({ name: 'workspace-test', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [cliPath, 'mcp', 'serve', ...args],
      cwd,
      env,
      stderr: 'ignore',
    }),
  );
  cleanups.push(() => client.close());
  const { tools } = await client.listTools();
  return { names: tools.map((tool) => tool.name), client };
}

describe('agent mcp serve started by a client in a wholesale folder', () => {
  it.each([
    ['the root folder /', () => '/'],
    ['the home folder', (home: string) => home],
  ])('in %s without --cwd: refused, naming --cwd, nothing served', async (_name, where) => {
    const { home, env } = await folders();
    const run = await runCli(['mcp', 'serve'], { cwd: where(home), env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('agent mcp serve --cwd <project folder>');
    expect(run.stderr).not.toContain('tools over stdio');
  });

  it('--cwd naming the home serves it: the user said so', async () => {
    const { home, env } = await folders();
    const { names, client } = await served(home, ['--cwd', home], env);
    expect(names).toContain('read_file');
    const result = await client.callTool({ name: 'read_file', arguments: { path: 'diary.txt' } });
    expect(JSON.stringify(result.content)).toContain('a file of the home');
  });

  it('started in a project folder, it serves that folder as before', async () => {
    const { project, env } = await folders();
    const { names, client } = await served(project, [], env);
    expect(names).toContain('read_file');
    const result = await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    expect(JSON.stringify(result.content)).toContain('the project');
  });
});
