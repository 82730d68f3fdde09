// A project's MCP server trusted with `"sandbox": true` (or a list of hosts) is trusted to run in
// the sandbox: the key is pinned with the server. Before, only the command, its arguments, env and
// files were: a `git pull` (or a sandboxed command editing `.mcp.json`) that dropped `"sandbox"`
// ran the same server outside the sandbox at the next start, unasked — it wrote outside the
// workspace as the user. Real CLI, real bubblewrap.
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
  runCli,
  shellQuoted,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
beforeAll(() => assertBuilt());
beforeEach(skipWithout('bwrap'));

/** A trusted folder whose `.mcp.json` server, given `sandbox`, tries to write `marker` outside it. */
async function trustedServer(sandbox: unknown) {
  const dir = await tempDir('agent-mcp-sandbox-trust-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const workspace = join(dir.path, 'ws');
  const marker = join(dir.path, 'outside', 'escaped');
  await mkdir(home, { recursive: true });
  await mkdir(join(dir.path, 'outside'));
  await mkdir(join(workspace, '.agent'), { recursive: true });
  await writeFile(join(workspace, 'server.sh'), `#!/bin/sh\necho ran > ${shellQuoted(marker)}\n`);
  const setServer = (entry: object) =>
    writeFile(
      join(workspace, '.mcp.json'),
      JSON.stringify({ mcpServers: { tools: { command: 'sh', args: ['server.sh'], ...entry } } }),
    );
  await setServer({ sandbox });
  const env = cleanEnv({ AGENT_HOME: home });
  const trust = await runCli(['trust', '--cwd', workspace], { env });
  expect(trust.code, trust.stderr).toBe(0);
  const script = await writeScript(dir.path, [{ text: 'done' }]);
  const run = () =>
    runCli(['-p', 'go', '--scripted', script, '--cwd', workspace, '--mcp-timeout', '5'], { env });
  return { setServer, run, marker, trust };
}

describe("a trusted project MCP server's sandbox", () => {
  it('is said when trusting, and the server runs in it', async () => {
    const at = await trustedServer(true);
    expect(at.trust.stdout + at.trust.stderr).toContain(
      'MCP server "tools" runs: sh server.sh, in the sandbox (no network)',
    );
    const run = await at.run();
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(at.marker)).toBe(false);
  });

  it('dropped from .mcp.json after trust: asked again, the server does not run outside', async () => {
    const at = await trustedServer(true);
    await at.setServer({});
    const run = await at.run();
    expect(existsSync(at.marker), 'the server ran outside the sandbox').toBe(false);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('changed since it was trusted');
    expect(run.stderr).toContain('MCP server "tools" runs: sh server.sh, outside the sandbox');
  });

  it('"sandbox": false after trust: asked again', async () => {
    const at = await trustedServer(true);
    await at.setServer({ sandbox: false });
    const run = await at.run();
    expect(existsSync(at.marker), 'the server ran outside the sandbox').toBe(false);
    expect(run.stderr).toContain('changed since it was trusted');
  });

  it('its network widened after trust (listed hosts → "on"): asked again', async () => {
    const at = await trustedServer({ network: ['api.example.com'] });
    expect(at.trust.stdout + at.trust.stderr).toContain(
      'in the sandbox (network: api.example.com)',
    );
    await at.setServer({ sandbox: { network: 'on' } });
    const run = await at.run();
    expect(run.stderr).toContain('changed since it was trusted');
    expect(run.stderr).toContain('in the sandbox (network: any host)');
  });
});

describe("a trusted project MCP server's cwd outside the project", () => {
  // The sandbox lets a server write its cwd: a project's `"cwd": "~"` made the user's home
  // writable to a server the question said ran "in the sandbox" — it wrote ~/.bashrc.
  it.each([
    ['the home ("~")', '~'],
    ['an absolute folder', 'OUTSIDE'],
    ['a link in the project to a folder outside', 'link'],
  ])('%s: the sandboxed server cannot write there', async (_label, cwd) => {
    const dir = await tempDir('agent-mcp-sandbox-cwd-');
    cleanups.push(dir.dispose);
    const home = join(dir.path, 'home');
    const outside = join(dir.path, 'outside');
    const workspace = join(dir.path, 'ws');
    await mkdir(join(home, '.agent'), { recursive: true });
    await mkdir(outside);
    await mkdir(workspace);
    await symlink(outside, join(workspace, 'link'));
    await writeFile(join(workspace, 'server.sh'), 'echo ran > ./planted\n');
    await writeFile(
      join(workspace, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          tools: {
            command: 'sh',
            args: [join(workspace, 'server.sh')],
            cwd: cwd === 'OUTSIDE' ? outside : cwd,
            sandbox: true,
          },
        },
      }),
    );
    const env = cleanEnv({ HOME: home, AGENT_HOME: join(home, '.agent') });
    const trust = await runCli(['trust', '--cwd', workspace], { env });
    expect(trust.code, trust.stderr).toBe(0);
    // The question names where it starts.
    expect(trust.stdout + trust.stderr).toContain(
      `in the sandbox (no network), in ${cwd === 'OUTSIDE' ? outside : cwd === '~' ? home : cwd}`,
    );
    const script = await writeScript(dir.path, [{ text: 'done' }]);
    const run = await runCli(
      ['-p', 'go', '--scripted', script, '--cwd', workspace, '--mcp-timeout', '5'],
      { env },
    );
    const where = cwd === '~' ? home : outside;
    expect(existsSync(join(where, 'planted')), 'the server wrote outside the project').toBe(false);
    expect(run.code, run.stderr).toBe(0);
  });
});
