// In a folder not trusted the user's own stdio servers start in the home folder, not in the
// folder (npx reads its .npmrc and runs its node_modules' copy of the package). A server the user
// sandboxed ("sandbox": true) then had the whole home as its writable root: it wrote outside
// the folder it would have written, where the user's own programs live (~/.local/bin, a
// toolchain under ~/.cache) — code that later ran unsandboxed. It writes only that folder still.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("a user's sandboxed stdio server in a folder not trusted", () => {
  beforeEach(skipWithout('bwrap'));

  it('starts in the home folder and writes only the folder it would have started in', async () => {
    const dir = await tempDir('agent-cli-mcp-untrusted-home-');
    cleanups.push(dir.dispose);
    const home = join(dir.path, 'home');
    const agentHome = join(home, '.agent');
    const repo = join(dir.path, 'repo');
    fs.mkdirSync(agentHome, { recursive: true });
    fs.mkdirSync(join(repo, '.git'), { recursive: true });
    const server = join(dir.path, 'server.sh');
    // It notes where it started, and whether it could write in the home, in the repository.
    fs.writeFileSync(
      server,
      [
        '#!/bin/sh',
        'echo x > "$HOME/planted" 2>/dev/null && home=WROTE',
        `echo "cwd: $(pwd) home: $home" > '${join(repo, 'report.txt')}'`,
        'exit 0',
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    fs.writeFileSync(
      join(agentHome, 'settings.json'),
      JSON.stringify({ mcpServers: { mine: { command: server, sandbox: true } } }),
    );
    const script = await writeScript(dir.path, [{ text: 'done' }]);
    const run = await runCli(['-p', 'go', '--scripted', script, '--mcp-timeout', '20'], {
      cwd: repo,
      env: cleanEnv({ HOME: home, AGENT_HOME: agentHome }),
    });
    expect(run.stderr).toContain(`mcp: mine start in ${home}`);
    expect(fs.existsSync(join(home, 'planted'))).toBe(false);
    const report = fs.readFileSync(join(repo, 'report.txt'), 'utf8');
    expect(report).toContain(`cwd: ${home}`);
    expect(report).not.toContain('WROTE');
  });
});
