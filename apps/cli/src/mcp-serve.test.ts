import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, cliPath, tempDir } from './test-support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeAll(() => assertBuilt());

function text(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as { type: string; text?: string }[])
    .map((block) => block.text ?? `[${block.type}]`)
    .join('\n');
}

async function workspace() {
  const dir = await tempDir('agent-mcp-serve-');
  cleanups.push(dir.dispose);
  await writeFile(join(dir.path, 'notes.txt'), 'hello from the workspace\n');
  return dir.path;
}

describe('agent mcp serve', () => {
  it('serves the built-in tools over stdio, with the permission rules applied on the server', async () => {
    const cwd = await workspace();
    const client = new Client({ name: 'sdk-client', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          cliPath,
          'mcp',
          'serve',
          '--cwd',
          cwd,
          '--mode',
          'workspace-write',
          '--deny',
          'bash(rm *)',
        ],
        env: cleanEnv(),
        stderr: 'ignore',
      }),
    );
    cleanups.push(() => client.close());
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['bash', 'read_file', 'write_file', 'edit_file']));
    expect(tools.find((tool) => tool.name === 'read_file')?.annotations?.readOnlyHint).toBe(true);

    const read = await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    expect(text(read)).toContain('hello from the workspace');

    const outside = await client.callTool({
      name: 'read_file',
      arguments: { path: '/etc/passwd' },
    });
    expect(outside.isError).toBe(true);

    const denied = await client.callTool({
      name: 'bash',
      arguments: { command: 'rm -rf notes.txt' },
    });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toContain('bash(rm *)');
    const again = await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    expect(text(again)).toContain('hello from the workspace');
  });

  it('serves over Streamable HTTP on 127.0.0.1 with --http', async () => {
    const cwd = await workspace();
    const child = spawn(process.execPath, [cliPath, 'mcp', 'serve', '--http', '--cwd', cwd], {
      env: cleanEnv(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    cleanups.push(async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    });
    const url = await new Promise<string>((resolve, reject) => {
      let seen = '';
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        seen += chunk;
        const found = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen);
        if (found?.[1] !== undefined) resolve(found[1]);
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${seen}`)));
    });
    const client = new Client({ name: 'sdk-client', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    cleanups.push(() => client.close());
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    expect(text(read)).toContain('hello from the workspace');
    // Read-only by default: a write is refused, not asked.
    const write = await client.callTool({
      name: 'write_file',
      arguments: { path: 'x.txt', content: 'x' },
    });
    expect(write.isError).toBe(true);
  });
});
