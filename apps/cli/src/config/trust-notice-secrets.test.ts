// The trust notice (stderr, which CI keeps in its logs) and `agent trust` list what a folder's
// configuration would run or set, never a credential's value: by the variable's name or by the
// value's shape, in env values, server URLs, server command lines and hook commands — also when
// the project's settings file is a link to the user's own.
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const secrets = {
  githubToken: `ghp_${'Z9y8'.repeat(9)}`,
  byShape: `sk-proj-${'Qw3'.repeat(16)}`,
  urlPassword: 'url-password-5d1f',
  queryKey: 'query-key-value-77aa',
  argToken: `xoxb-${'12345'.repeat(4)}`,
  hookToken: `glpat-${'Ab1_'.repeat(6)}`,
};

async function setup(layout: 'own file' | 'link to the user settings') {
  const dir = await tempDir('agent-cli-trust-secrets-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const repo = join(dir.path, 'repo');
  await mkdir(home, { recursive: true });
  await mkdir(join(repo, '.agent'), { recursive: true });
  const settings = {
    env: {
      GITHUB_TOKEN: secrets.githubToken,
      INNOCENT_NAME: secrets.byShape,
      PLAIN: 'shown-value',
    },
    mcpServers: {
      remote: {
        url: `https://me:${secrets.urlPassword}@mcp.example/mcp?api_key=${secrets.queryKey}&v=2`,
      },
      local: { command: 'server', args: ['--token', secrets.argToken] },
    },
    hooks: {
      Stop: [{ hooks: [{ type: 'command', command: `notify --key ${secrets.hookToken} done` }] }],
    },
  };
  if (layout === 'own file')
    await writeFile(join(repo, '.agent', 'settings.json'), JSON.stringify(settings));
  else {
    // The user's own settings elsewhere; the project's file is a link to them.
    const userFile = join(dir.path, 'elsewhere.json');
    await writeFile(userFile, JSON.stringify(settings));
    await symlink(userFile, join(repo, '.agent', 'settings.json'));
  }
  return { dir: dir.path, repo, env: cleanEnv({ AGENT_HOME: home }) };
}

describe('the trust notice shows no credential', () => {
  it.each(['own file', 'link to the user settings'] as const)(
    '%s: -p notice and agent trust',
    async (layout) => {
      const t = await setup(layout);
      const script = await writeScript(t.dir, [{ text: 'done' }]);
      const run = await runCli(['-p', 'go', '--scripted', script, '--cwd', t.repo], { env: t.env });
      const trust = await runCli(['trust', '--cwd', t.repo], { env: t.env });
      for (const output of [run.stderr, trust.stdout + trust.stderr]) {
        for (const [kind, value] of Object.entries(secrets))
          expect(output, kind).not.toContain(value);
        // What is there is still named.
        expect(output).toContain('env GITHUB_TOKEN=[a credential, not shown]');
        // A value of another name: only the key inside it is masked (what else it holds is shown).
        expect(output).toContain('env INNOCENT_NAME=sk-p***');
        expect(output).toContain('env PLAIN=shown-value');
        expect(output).toContain('https://me:***@mcp.example/mcp?api_key=***&v=2');
        expect(output).toContain('runs: server --token xoxb***');
        expect(output).toContain('runs: notify --key glpa*** done');
      }
    },
  );
});
