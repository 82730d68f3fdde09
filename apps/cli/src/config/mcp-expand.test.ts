// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is written into config files as users write it, not a template.
// `~` and `${VAR}` in the `mcpServers` people write (Claude Code's `.mcp.json` expands `${VAR}`):
// the built CLI as a real process, a real stdio MCP server started as `~/bin/server.sh` from the
// user's settings, and a project's `.mcp.json` naming `${GITHUB_PAT}` in a header. Before, the
// first failed with `spawn ~/bin/server.sh ENOENT` and the second sent a literal `${GITHUB_PAT}`.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function homeAndWorkspace() {
  const dir = await tempDir('agent-mcp-expand-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const workspace = join(dir.path, 'workspace');
  await mkdir(join(home, '.agent'), { recursive: true });
  await mkdir(join(home, 'bin'));
  await mkdir(join(workspace, '.git'), { recursive: true });
  const env = cleanEnv({ HOME: home, AGENT_HOME: join(home, '.agent') });
  return { home, workspace, env };
}

describe('an MCP server named with ~ or ${VAR}', () => {
  it("your settings: ~/bin/server.sh starts, ${VAR} in its env is your environment's value", async () => {
    const { home, workspace, env } = await homeAndWorkspace();
    const server = join(home, 'bin', 'server.sh');
    const fixture = join(appDir, 'src', '__fixtures__', 'env-server.mjs');
    await writeFile(server, `#!/bin/sh\nexec "${process.execPath}" "${fixture}"\n`);
    await chmod(server, 0o755);
    await writeFile(
      join(home, '.agent', 'settings.json'),
      JSON.stringify({
        mcpServers: {
          mine: { command: '~/bin/server.sh', env: { GREETING: '${MY_GREETING:-unset}' } },
        },
      }),
    );
    const script = await writeScript(workspace, [
      { toolCalls: [{ name: 'mine__value', arguments: { name: 'GREETING' } }] },
      { text: 'done' },
    ]);
    const run = await runCli(
      ['-p', 'hi', '--scripted', script, '--allow', 'mine__value', '--sandbox', 'off'],
      { cwd: workspace, env: { ...env, MY_GREETING: 'hello-from-env' } },
    );
    expect(run.stderr).not.toContain('could not connect');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('✓ mine__value');
    expect(run.stderr).toContain('hello-from-env');
  });

  it('your settings: an unset ${VAR} without a default stops the start, naming file, server and key', async () => {
    const { home, workspace, env } = await homeAndWorkspace();
    const settings = join(home, '.agent', 'settings.json');
    await writeFile(
      settings,
      JSON.stringify({
        mcpServers: {
          gh: {
            url: 'http://127.0.0.1:1/mcp',
            headers: { Authorization: 'Bearer ${NOT_SET_PAT}' },
          },
        },
      }),
    );
    const script = await writeScript(workspace, [{ text: 'done' }]);
    const run = await runCli(['-p', 'hi', '--scripted', script], { cwd: workspace, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `${settings}: server "gh" names \${NOT_SET_PAT} in "headers.Authorization", which is not set (export NOT_SET_PAT=…, or write \${NOT_SET_PAT:-default})`,
    );
  });

  it("a project's .mcp.json: ${VAR} is not expanded — that server is left out, said, and the run goes on", async () => {
    const { workspace, env } = await homeAndWorkspace();
    const mcpJson = join(workspace, '.mcp.json');
    await writeFile(
      mcpJson,
      JSON.stringify({
        mcpServers: {
          gh: {
            type: 'http',
            url: 'http://127.0.0.1:1/mcp',
            headers: { Authorization: 'Bearer ${GITHUB_PAT}' },
          },
        },
      }),
    );
    const script = await writeScript(workspace, [{ text: 'done' }]);
    const run = await runCli(['-p', 'hi', '--scripted', script, '--trust'], {
      cwd: workspace,
      env: { ...env, GITHUB_PAT: 'ghp_secret_value_1234' },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      `agent: server "gh" of ${mcpJson} is left out: it names \${GITHUB_PAT} in "headers.Authorization": variables in a project's file are not expanded`,
    );
    expect(run.stderr).not.toContain('ghp_secret_value_1234');
    expect(run.stdout).toBe('done\n');
  });
});
