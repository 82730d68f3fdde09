// A project's stdio MCP server runs outside the sandbox; a file tool (or a sandboxed command) can
// rewrite the script it runs during the session. When the server then stops and the next call
// reconnects, the rewritten script must not be what starts: the start is refused, naming the
// file. Real CLI, real server process, a real rewrite through write_file.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

beforeAll(assertBuilt);

const envServer = join(appDir, 'src', '__fixtures__', 'env-server.mjs');

describe("a project's MCP server whose script changed during the session", () => {
  it.each([
    ['at the project root', undefined],
    // Its files are found from its cwd: `server.mjs` is tools/server.mjs.
    ['with its own "cwd": "tools"', 'tools'],
  ])('%s: is not started again at the reconnect; the run goes on', async (_where, cwd) => {
    const dir = await tempDir('agent-cli-mcp-respawn-');
    try {
      const home = join(dir.path, 'home');
      const workspace = join(dir.path, 'ws');
      await mkdir(home);
      await mkdir(join(workspace, cwd ?? '.'), { recursive: true });
      const marker = join(dir.path, 'rewritten-ran');
      await writeFile(
        join(workspace, cwd ?? '.', 'server.mjs'),
        `await import(${JSON.stringify(envServer)});\n`,
      );
      await writeFile(
        join(workspace, '.mcp.json'),
        JSON.stringify({
          mcpServers: {
            env: { command: 'node', args: ['server.mjs'], ...(cwd === undefined ? {} : { cwd }) },
          },
        }),
      );
      const rewritten = `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'ran');\nawait import(${JSON.stringify(envServer)});\n`;
      const script = await writeScript(dir.path, [
        {
          toolCalls: [
            {
              name: 'write_file',
              arguments: { path: join(cwd ?? '.', 'server.mjs'), content: rewritten },
            },
          ],
        },
        { toolCalls: [{ name: 'env__die', arguments: { name: 'NONE', pad: 0 } }] },
        { toolCalls: [{ name: 'env__names', arguments: {} }] },
        { text: 'done' },
      ]);
      const run = await runCli(
        [
          '-p',
          'go',
          '--scripted',
          script,
          '--cwd',
          workspace,
          '--trust',
          '--mode',
          'workspace-write',
          '--allow',
          'env__die',
          '--allow',
          'env__names',
        ],
        {
          env: cleanEnv({
            AGENT_HOME: home,
            PATH: `${process.execPath.replace(/\/node$/, '')}:${process.env.PATH ?? ''}`,
          }),
        },
      );
      expect(run.stdout).toContain('done');
      expect(run.stderr).toContain('exited with code 3');
      // The transcript's line is cut; the model reads the whole reason (the files named). A
      // refused start is denied at once, not retried (tools-mcp).
      expect(run.stderr).toMatch(
        /✗ env__names \[denied\]: .*"env" was not started: the project files it run/,
      );
      expect(existsSync(marker)).toBe(false);
    } finally {
      await dir.dispose();
    }
  });
});
