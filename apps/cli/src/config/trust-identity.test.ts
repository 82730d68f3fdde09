// What a trust entry covers: the folder trusted, found again by any spelling of its path (a
// trailing slash, `sub/..`, a link to it) and the plain folders below it — not a repository cloned
// below it later (a clone in a trusted ~/src, a submodule or nested clone in a trusted repository),
// and not another folder made at its path after it was removed (`rm -rf repo && git clone
// <another> repo`). Trust is what makes the user's own hooks run outside the sandbox, the
// folder's language servers run and its skills stand in for the user's: a trusted parent handed
// all of that to every new clone under it.
//
// Observed through the user's own Stop hook, which runs in the OS sandbox in a folder that is not
// trusted (it cannot write outside the workspace) and outside it in a trusted one.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { chmod, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, writeScript } from '../testing/test-support.js';

beforeAll(assertBuilt);
beforeEach(skipWithout('bwrap'));
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function setup() {
  // Not under /tmp, which the sandbox replaces with a private one.
  const base = mkdtempSync('/var/tmp/agent-cli-trust-identity-');
  await chmod(base, 0o755);
  cleanups.push(() => rmSync(base, { recursive: true, force: true }));
  const home = join(base, 'home');
  const outside = join(base, 'outside');
  await mkdir(home);
  await mkdir(outside);
  await writeFile(
    join(home, 'settings.json'),
    JSON.stringify({
      hooks: {
        Stop: [{ hooks: [{ type: 'command', command: `touch ${outside}/"$HOOK_LABEL"` }] }],
      },
    }),
  );
  const script = await writeScript(base, [{ text: 'done' }]);
  const env = (label: string) => cleanEnv({ AGENT_HOME: home, HOOK_LABEL: label });
  const trust = async (folder: string) => {
    const run = await runCli(['trust', '--cwd', folder], { env: env('trust') });
    expect(run.code, run.stderr).toBe(0);
  };
  /** Runs `-p` in `cwd`; whether the user's hook ran outside the sandbox (the folder trusted). */
  const trusted = async (cwd: string, label: string) => {
    const run = await runCli(['-p', 'go', '--scripted', script, '--cwd', cwd], {
      env: env(label),
    });
    expect(run.code, run.stderr).toBe(0);
    return { trusted: existsSync(join(outside, label)), stderr: run.stderr };
  };
  return { base, trust, trusted };
}

function gitInit(folder: string) {
  execFileSync('git', ['init', '-q', folder]);
}

describe('what a trusted folder covers', () => {
  it('its plain subfolders and any spelling of its path (controls)', async () => {
    const { base, trust, trusted } = await setup();
    const repo = join(base, 'repo');
    await mkdir(join(repo, 'sub'), { recursive: true });
    gitInit(repo);
    await trust(repo);
    expect((await trusted(repo, 'itself')).trusted).toBe(true);
    expect((await trusted(`${repo}/`, 'trailing-slash')).trusted).toBe(true);
    expect((await trusted(join(repo, 'sub', '..'), 'dot-dot')).trusted).toBe(true);
    expect((await trusted(join(repo, 'sub'), 'subfolder')).trusted).toBe(true);
    await symlink(repo, join(base, 'link'));
    expect((await trusted(join(base, 'link'), 'link')).trusted).toBe(true);
    // Another spelling that is another folder on this file system: not covered.
    await mkdir(join(base, 'REPO'));
    expect((await trusted(join(base, 'REPO'), 'other-case')).trusted).toBe(false);
  });

  it('not a repository cloned later into a trusted plain folder (~/src)', async () => {
    const { base, trust, trusted } = await setup();
    const src = join(base, 'src');
    await mkdir(join(src, 'notes'), { recursive: true });
    await trust(src);
    expect((await trusted(join(src, 'notes'), 'plain-subfolder')).trusted).toBe(true);
    const clone = join(src, 'evil');
    await mkdir(clone);
    gitInit(clone);
    const run = await trusted(clone, 'clone');
    expect(run.trusted).toBe(false);
    expect(run.stderr).toContain(
      `${clone} is a repository of its own below the trusted ${src}: trusting a folder does not trust the repositories cloned into it`,
    );
  });

  it('not a repository nested in a trusted repository (a vendored clone, a submodule)', async () => {
    const { base, trust, trusted } = await setup();
    const repo = join(base, 'repo');
    const nested = join(repo, 'vendor', 'evil');
    await mkdir(nested, { recursive: true });
    gitInit(repo);
    await trust(repo);
    gitInit(nested);
    expect((await trusted(nested, 'nested')).trusted).toBe(false);
    // A submodule's .git is a file naming its git directory: a repository of its own too.
    const submodule = join(repo, 'modules', 'lib');
    await mkdir(submodule, { recursive: true });
    await writeFile(join(submodule, '.git'), `gitdir: ${join(repo, '.git', 'modules', 'lib')}\n`);
    expect((await trusted(submodule, 'submodule')).trusted).toBe(false);
    // Trusted on its own, it is.
    await trust(nested);
    expect((await trusted(nested, 'nested-trusted')).trusted).toBe(true);
  });

  it('not another folder made at the trusted path after it was removed (a new clone)', async () => {
    const { base, trust, trusted } = await setup();
    const repo = join(base, 'repo');
    await mkdir(repo);
    gitInit(repo);
    await trust(repo);
    expect((await trusted(repo, 'before')).trusted).toBe(true);
    await rm(repo, { recursive: true });
    await mkdir(repo);
    gitInit(repo);
    const run = await trusted(repo, 'after');
    expect(run.trusted).toBe(false);
    expect(run.stderr).toMatch(/was trusted on .*, but the folder there now is another one/);
    await trust(repo);
    expect((await trusted(repo, 'trusted-again')).trusted).toBe(true);
  });
});
