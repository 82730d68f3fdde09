import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';
import { hookCommandSecrets } from './session-hooks.js';

// A token or webhook URL written into a hook's command (a notifier posting to Slack, a curl with
// an Authorization header): a failed hook's notice quotes its command on the terminal.

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const secrets = {
  webhook: 'https://hooks.slack.com/services/T0001/B0001/hookSecretPath9x8y7z',
  bearer: 'hooktoken-abc123def456',
  apiKey: 'hook-api-key-value-41f0',
  github: `ghp_${'H8k3'.repeat(9)}`,
};
const commands = {
  PreToolUse: `curl -s -H 'Authorization: Bearer ${secrets.bearer}' ${secrets.webhook}; echo failing >&2; exit 1`,
  PostToolUse: `notify --api-key "${secrets.apiKey}" --channel builds; exit 1`,
  SessionStart: `GITHUB=${secrets.github} gh-notify started; exit 3`,
};

describe('credentials in a hook command', () => {
  it('a failed hook’s notice shows markers, not the token, URL or key', async () => {
    const dir = await tempDir('agent-cli-hook-command-secrets-');
    cleanups.push(dir.dispose);
    const home = join(dir.path, 'home');
    const workspace = join(dir.path, 'ws');
    await mkdir(home);
    await mkdir(workspace);
    const hooks = Object.fromEntries(
      Object.entries(commands).map(([event, command]) => [
        event,
        [{ matcher: '*', hooks: [{ type: 'command', command }] }],
      ]),
    );
    await writeFile(join(home, 'settings.json'), JSON.stringify({ hooks }));
    const script = await writeScript(dir.path, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'true' } }] },
      { text: 'done' },
    ]);
    const run = await runCli(['-p', 'hi', '--scripted', script, '--cwd', workspace], {
      env: cleanEnv({ AGENT_HOME: home }),
    });
    expect(run.code, run.stderr).toBe(0);
    // The hooks failed, and said so.
    expect(run.stderr).toContain('PreToolUse hook');
    expect(run.stderr).toContain('exited 1');
    const shown = Object.entries(secrets).filter(([, value]) =>
      (run.stdout + run.stderr).includes(value),
    );
    expect(shown.map(([kind]) => kind)).toEqual([]);
    expect(run.stderr).toContain('[redacted:hook');
    // What is no credential stays readable.
    expect(run.stderr).toContain('--channel builds');
  });

  it('hookCommandSecrets: each credential of each hook, by name', () => {
    const found = Object.values(
      hookCommandSecrets({
        PreToolUse: [{ hooks: [{ type: 'command', command: commands.PreToolUse }] }],
        PostToolUse: [{ hooks: [{ type: 'command', command: commands.PostToolUse }] }],
      }),
    );
    expect(found).toContain(secrets.bearer);
    expect(found).toContain(secrets.webhook);
    expect(found).toContain(secrets.apiKey);
  });
});
