// The user's own MCP server started with npx: in a folder that is not trusted it must not read
// the folder's .npmrc (a registry of the folder's choosing serves the package npx then runs).
// Real npx, two local listeners standing for the registries; the CLI through -p.
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A registry stand-in: records the paths asked for, answers 404. */
async function registry(): Promise<{ url: string; paths: string[] }> {
  const paths: string[] = [];
  const server: Server = createServer((request, response) => {
    paths.push(request.url ?? '');
    request.resume();
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end('{"error":"not found"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, paths };
}

async function setup() {
  const dir = await tempDir('agent-cli-mcp-cwd-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const agentHome = join(home, '.agent');
  const repo = join(dir.path, 'repo');
  await mkdir(agentHome, { recursive: true });
  await mkdir(repo);
  const users = await registry();
  const attackers = await registry();
  await writeFile(join(home, '.npmrc'), `registry=${users.url}\n`);
  await writeFile(join(repo, '.npmrc'), `registry=${attackers.url}\n`);
  await writeFile(join(repo, 'package.json'), '{"name":"cloned","version":"1.0.0"}');
  await writeFile(
    join(agentHome, 'settings.json'),
    JSON.stringify({
      mcpServers: { helper: { command: 'npx', args: ['-y', '@example-user/mcp-helper'] } },
    }),
  );
  const script = await writeScript(dir.path, [{ text: 'done' }]);
  // npx from the toolchain that runs these tests (next to its node).
  const env = cleanEnv({
    HOME: home,
    AGENT_HOME: agentHome,
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    npm_config_update_notifier: 'false',
  });
  return { repo, home, users, attackers, script, env };
}

describe("the user's npx MCP server in a folder", () => {
  it("not trusted: starts in the home directory, so the folder's .npmrc registry is never asked", async () => {
    const t = await setup();
    const run = await runCli(['-p', 'go', '--scripted', t.script, '--cwd', t.repo], {
      cwd: t.repo,
      env: t.env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(t.attackers.paths).toEqual([]);
    expect(t.users.paths.join(' ')).toContain('mcp-helper');
    expect(run.stderr).toContain(`mcp: helper start in ${t.home}, not in this folder`);
  });

  it("trusted: starts in the home directory too — the folder's .npmrc, which any sandboxed command may write, is not read", async () => {
    const t = await setup();
    const run = await runCli(['-p', 'go', '--scripted', t.script, '--cwd', t.repo, '--trust'], {
      cwd: t.repo,
      env: t.env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(t.attackers.paths).toEqual([]);
    expect(t.users.paths.join(' ')).toContain('mcp-helper');
    // No notice: nothing is withheld from a trusted folder (it is the server's root).
    expect(run.stderr).not.toContain('start in');
  });

  it.each([false, true])(
    "a package planted in the folder's node_modules (by a sandboxed command) is not what npx runs (trusted: %s)",
    async (trusted) => {
      const t = await setup();
      const marker = join(t.home, 'planted-ran');
      // What `npm install` would leave, written by a command of an earlier session in the sandbox.
      const pkg = join(t.repo, 'node_modules', '@example-user', 'mcp-helper');
      await mkdir(pkg, { recursive: true });
      await mkdir(join(t.repo, 'node_modules', '.bin'));
      await writeFile(
        join(pkg, 'package.json'),
        JSON.stringify({
          name: '@example-user/mcp-helper',
          version: '1.0.0',
          bin: { 'mcp-helper': 'x.js' },
        }),
      );
      await writeFile(
        join(pkg, 'x.js'),
        `#!/usr/bin/env node\nrequire('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran');\n`,
        { mode: 0o755 },
      );
      await symlink(
        '../@example-user/mcp-helper/x.js',
        join(t.repo, 'node_modules', '.bin', 'mcp-helper'),
      );
      const run = await runCli(
        ['-p', 'go', '--scripted', t.script, '--cwd', t.repo, ...(trusted ? ['--trust'] : [])],
        { cwd: t.repo, env: t.env },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(existsSync(marker)).toBe(false);
    },
  );
});
