// A PreToolUse guard of a trusted folder that is not in force (changed, new, removed): the tools
// it names ask first until the folder is trusted again — the real CLI, `agent trust`, `-p`.
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

beforeAll(() => assertBuilt());

const denyBash = {
  matcher: 'bash',
  hooks: [{ type: 'command', command: 'echo blocked-by-guard >&2; exit 2' }],
};
const allowAll = { hooks: [{ type: 'command', command: 'exit 0' }] };
const watchEdits = { matcher: 'edit_file', hooks: [{ type: 'command', command: 'exit 0' }] };

/**
 * A git folder whose `.agent/settings.json` holds `guards` (PreToolUse entries), trusted with
 * `agent trust` as it is then; `change` rewrites them; `bash` runs one call with `-p`
 * (full-access, no sandbox: nothing but the guards and the rules stands in its way).
 */
async function trustedFolder(guards: unknown[]) {
  const dir = await tempDir('agent-cli-guards-');
  const home = join(dir.path, 'home');
  const workspace = join(dir.path, 'ws');
  await mkdir(join(workspace, '.agent'), { recursive: true });
  await mkdir(home);
  await mkdir(join(workspace, '.git'));
  const env = cleanEnv({ AGENT_HOME: home });
  const change = (next: unknown[]) =>
    writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({ hooks: { PreToolUse: next } }),
    );
  await change(guards);
  const trust = async () => {
    const run = await runCli(['trust', '--cwd', workspace], { env });
    expect(run.code, run.stderr).toBe(0);
  };
  await trust();
  const marker = join(workspace, 'ran');
  const script = await writeScript(dir.path, [
    { toolCalls: [{ name: 'bash', arguments: { command: `touch ${marker}` } }] },
    { text: 'answered' },
  ]);
  const bash = async () => {
    await rm(marker, { force: true });
    const run = await runCli(
      [
        ...['-p', 'go', '--scripted', script, '--cwd', workspace],
        ...['--mode', 'full-access', '--sandbox', 'off'],
      ],
      { env },
    );
    return { run, ran: existsSync(marker) };
  };
  return { workspace, change, trust, bash, [Symbol.asyncDispose]: dir.dispose };
}

describe.concurrent('a PreToolUse guard trusted in a folder, not in force', () => {
  it('the control: the guard as trusted answers (it denies bash)', async () => {
    await using folder = await trustedFolder([denyBash]);
    const { run, ran } = await folder.bash();
    expect(ran).toBe(false);
    expect(run.stderr).toContain('blocked-by-guard');
    expect(run.stderr).not.toContain('not in force');
  });

  it('rewritten to let everything through: bash asks (-p: refused, exit 4), until trusted again', async () => {
    await using folder = await trustedFolder([denyBash]);
    await folder.change([{ ...denyBash, hooks: [{ type: 'command', command: 'exit 0' }] }]);
    const changed = await folder.bash();
    // Before: the changed guard was withheld, the old one gone, and bash ran (exit 0).
    expect(changed.ran).toBe(false);
    expect(changed.run.code, changed.run.stderr).toBe(4);
    expect(changed.run.stderr).toContain(
      'so that no call runs unguarded while a PreToolUse guard trusted in',
    );
    expect(changed.run.stderr).toContain('bash asks first until you trust the folder again');
    await folder.trust();
    const trusted = await folder.bash();
    expect(trusted.run.code, trusted.run.stderr).toBe(0);
    expect(trusted.ran).toBe(true);
  });

  it('removed from the file: named, and bash asks until trusted again', async () => {
    await using folder = await trustedFolder([denyBash]);
    await folder.change([]);
    const removed = await folder.bash();
    expect(removed.ran).toBe(false);
    expect(removed.run.code, removed.run.stderr).toBe(4);
    expect(removed.run.stderr).toContain('PreToolUse guards trusted in');
    expect(removed.run.stderr).toContain(
      'removed hook PreToolUse (bash) runs: echo blocked-by-guard >&2; exit 2 (',
    );
    expect(removed.run.stderr).toContain(
      '/.agent/settings.json) — gone from the file, it no longer runs',
    );
    await folder.trust();
    const trusted = await folder.bash();
    expect(trusted.run.code, trusted.run.stderr).toBe(0);
    expect(trusted.ran).toBe(true);
  });

  it('another guard put before it (its key moved): both asked for, bash refused', async () => {
    await using folder = await trustedFolder([denyBash]);
    await folder.change([watchEdits, denyBash]);
    const moved = await folder.bash();
    expect(moved.ran).toBe(false);
    expect(moved.run.code, moved.run.stderr).toBe(4);
    expect(moved.run.stderr).toMatch(/edit_file, bash ask first|bash, edit_file ask first/);
  });

  it('a guard of every tool removed: every tool asks', async () => {
    await using folder = await trustedFolder([allowAll, denyBash]);
    await folder.change([denyBash]);
    const { run, ran } = await folder.bash();
    expect(ran).toBe(false);
    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toContain('every tool asks first until you trust the folder again');
  });

  it('a folder never trusted: its guards never run, and nothing asks', async () => {
    await using dir = {
      ...(await tempDir('agent-cli-guards-')),
      async [Symbol.asyncDispose]() {
        await this.dispose();
      },
    };
    const workspace = join(dir.path, 'ws');
    await mkdir(join(workspace, '.agent'), { recursive: true });
    await mkdir(join(workspace, '.git'));
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({ hooks: { PreToolUse: [denyBash] } }),
    );
    const marker = join(workspace, 'ran');
    const script = await writeScript(dir.path, [
      { toolCalls: [{ name: 'bash', arguments: { command: `touch ${marker}` } }] },
      { text: 'answered' },
    ]);
    const run = await runCli(
      [
        ...['-p', 'go', '--scripted', script, '--cwd', workspace],
        ...['--mode', 'full-access', '--sandbox', 'off'],
      ],
      { env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }) },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(marker)).toBe(true);
    expect(run.stderr).not.toContain('not in force');
  });
});
