import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

// A project's deny rules hold without trust, so nothing asked when they went: a run (write_file
// in workspace-write, or a sandboxed bash command) emptied `.agent/settings.json`, and the next
// session read the file its rule kept from the model. `.agent/` is now read-only in the sandbox
// and a file tool asks before writing there (refused in -p). Real CLI, real bubblewrap.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
beforeAll(() => assertBuilt());
beforeEach(skipWithout('bwrap'));

const rules = '{"permissions":{"deny":["read_file(secret.txt)"]}}\n';

describe('a project deny rule a run tries to remove', () => {
  it.each([
    {
      by: 'write_file',
      call: { name: 'write_file', arguments: { path: '.agent/settings.json', content: '{}' } },
    },
    {
      by: 'a sandboxed bash command',
      call: {
        name: 'bash',
        arguments: { command: 'echo {} > .agent/settings.json; mv .agent .agent-old' },
      },
    },
  ])('by $by: the file stays, and the next session still denies the read', async ({ call }) => {
    const dir = await tempDir('agent-cli-deny-kept-');
    cleanups.push(dir.dispose);
    const home = join(dir.path, 'home');
    const workspace = join(dir.path, 'ws');
    await mkdir(home);
    await mkdir(join(workspace, '.agent'), { recursive: true });
    await writeFile(join(workspace, '.agent', 'settings.json'), rules);
    await writeFile(join(workspace, 'secret.txt'), 'kept-from-the-model\n');
    const run = async (turns: Parameters<typeof writeScript>[1]) =>
      runCli(
        [
          '-p',
          'go',
          '--scripted',
          await writeScript(dir.path, turns),
          '--cwd',
          workspace,
          '--mode',
          'workspace-write',
          '--sandbox',
          'required',
        ],
        { env: cleanEnv({ AGENT_HOME: home }) },
      );
    const first = await run([{ toolCalls: [call] }, { text: 'done' }]);
    expect([0, 4], first.stderr).toContain(first.code);
    expect(readFileSync(join(workspace, '.agent', 'settings.json'), 'utf8')).toBe(rules);
    const second = await run([
      { toolCalls: [{ name: 'read_file', arguments: { path: 'secret.txt' } }] },
      { text: 'done' },
    ]);
    expect(`${second.stdout}${second.stderr}`).not.toContain('kept-from-the-model');
  });
});
