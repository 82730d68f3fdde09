// A trusted project sets `PYTHONPATH` (`"env": {"PYTHONPATH": "lib"}` for its hooks, or an MCP
// server's own `env`), and its Python imports a module of its own from there. Trust pinned the
// script and the modules beside it and at the root, not those in PYTHONPATH's folders: a
// `git pull` that changed `lib/helpers.py` ran the new code in the next session, unasked (within a
// session it was pinned already: session/python-path-pins.test.ts). Likewise Node's NODE_PATH
// (`require('helpers')` → `lib/helpers.js`) and Perl's PERL5LIB (`use Helper;` → carton's
// `local/lib/perl5/Helper.pm`). Real CLI, real python3 and node, as root and as nobody.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
  runCli,
  tempDir,
  testUsers,
  writeScript,
} from '../testing/test-support.js';
import { projectFileDigests, pythonPathFolders } from './trust-scripts.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
beforeEach(skipWithout('python3'));
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function put(root: string, files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, name)), { recursive: true });
    await writeFile(join(root, name), text, { mode: 0o755 });
  }
}

/** `lib/helpers.py`, whose `mark()` creates `<dir>/<canary>`. */
const helpers = (dir: string, canary: string) =>
  `def mark():\n    open(${JSON.stringify(join(dir, canary))}, 'w').close()\n`;

/**
 * A repository with `settings` (its `.agent/settings.json`) and `files`, trusted with
 * `agent trust` as `uid`; `run` is one `-p` session there, as `uid`.
 */
async function trusted(
  settings: (dir: string) => unknown,
  files: Record<string, string>,
  uid: number | undefined,
) {
  const scratch = await tempDir('agent-trust-pythonpath-');
  cleanups.push(scratch.dispose);
  const dir = scratch.path;
  const home = join(dir, 'home');
  const workspace = join(dir, 'repo');
  await mkdir(join(workspace, '.agent'), { recursive: true });
  await mkdir(home);
  execFileSync('git', ['init', '-q', workspace]);
  await put(workspace, { ...files, 'lib/helpers.py': helpers(dir, 'first') });
  await writeFile(join(workspace, '.agent', 'settings.json'), JSON.stringify(settings(dir)));
  const script = await writeScript(dir, [{ text: 'done' }]);
  if (uid !== undefined) execFileSync('chown', ['-R', `${uid}:${uid}`, dir]);
  // Another user's CLI cannot use this one's home.
  const env = cleanEnv({ AGENT_HOME: home, ...(uid === undefined ? {} : { HOME: home }) });
  const trust = await runCli(['trust', '--cwd', workspace], { env, uid });
  expect(trust.code, trust.stderr).toBe(0);
  const run = () => runCli(['-p', 'go', '--scripted', script, '--cwd', workspace], { env, uid });
  // What a pull does: lib/helpers.py changed, the settings and the script as trusted.
  const pull = async () => {
    await writeFile(join(workspace, 'lib', 'helpers.py'), helpers(dir, 'second'));
  };
  return { dir, workspace, run, pull };
}

const hookCommand = 'python3 scripts/hooks/check.py';
const checkScript = { 'scripts/hooks/check.py': 'import helpers\nhelpers.mark()\n' };

describe.each(testUsers)(
  'a pull changing what trusted Python imports from PYTHONPATH ($label)',
  ({ uid }) => {
    it.each([
      ['lib', 'lib'],
      ['./lib:/usr/lib/nothing', './lib:/usr/lib/nothing'],
    ])(
      "a hook with the settings' PYTHONPATH=%s: left out, named, its new code not run",
      async (_what, pythonPath) => {
        const { dir, run, pull } = await trusted(
          () => ({
            env: { PYTHONPATH: pythonPath },
            hooks: { Stop: [{ hooks: [{ type: 'command', command: hookCommand }] }] },
          }),
          checkScript,
          uid,
        );
        const first = await run();
        expect(first.code, first.stderr).toBe(0);
        expect(existsSync(join(dir, 'first')), first.stderr).toBe(true);

        await pull();
        const changed = await run();
        expect(changed.code, changed.stderr).toBe(0);
        expect(changed.stderr).toContain('changed since it was trusted');
        expect(changed.stderr).toContain(`changed hook Stop runs: ${hookCommand}`);
        expect(existsSync(join(dir, 'second')), 'the pulled code ran unasked').toBe(false);
      },
    );

    it('a hook whose own command sets PYTHONPATH=lib: left out, named, its new code not run', async () => {
      const own = `PYTHONPATH=lib ${hookCommand}`;
      const { dir, run, pull } = await trusted(
        () => ({ hooks: { Stop: [{ hooks: [{ type: 'command', command: own }] }] } }),
        checkScript,
        uid,
      );
      const first = await run();
      expect(existsSync(join(dir, 'first')), first.stderr).toBe(true);

      await pull();
      const changed = await run();
      expect(changed.stderr).toContain(`changed hook Stop runs: ${own}`);
      expect(existsSync(join(dir, 'second')), 'the pulled code ran unasked').toBe(false);
    });

    it("a node hook with the settings' NODE_PATH=lib: left out, named, its new code not run", async () => {
      const node = 'node scripts/hooks/check.cjs';
      // Hooks run at the project root: `../first` is beside it, in the test's folder.
      const helper = (canary: string) => `require('node:fs').writeFileSync('../${canary}', '');\n`;
      const { dir, workspace, run } = await trusted(
        () => ({
          env: { NODE_PATH: 'lib' },
          hooks: { Stop: [{ hooks: [{ type: 'command', command: node }] }] },
        }),
        { 'scripts/hooks/check.cjs': "require('helpers');\n", 'lib/helpers.js': helper('first') },
        uid,
      );
      const first = await run();
      expect(existsSync(join(dir, 'first')), first.stderr).toBe(true);

      await writeFile(join(workspace, 'lib', 'helpers.js'), helper('second'));
      const changed = await run();
      expect(changed.stderr).toContain(`changed hook Stop runs: ${node}`);
      expect(existsSync(join(dir, 'second')), 'the pulled code ran unasked').toBe(false);
    });

    it("a perl hook with the settings' PERL5LIB=local/lib/perl5: left out, named, its new code not run", async () => {
      const perl = 'perl scripts/hooks/check.pl';
      // Hooks run at the project root: `../first` is beside it, in the test's folder.
      const helper = (canary: string) => `package Helper;\nopen(my $f, ">", "../${canary}");\n1;\n`;
      const { dir, workspace, run } = await trusted(
        () => ({
          env: { PERL5LIB: 'local/lib/perl5' },
          hooks: { Stop: [{ hooks: [{ type: 'command', command: perl }] }] },
        }),
        {
          'scripts/hooks/check.pl': 'use strict;\nuse Helper;\n',
          'local/lib/perl5/Helper.pm': helper('first'),
        },
        uid,
      );
      const first = await run();
      expect(existsSync(join(dir, 'first')), first.stderr).toBe(true);

      await writeFile(join(workspace, 'local', 'lib', 'perl5', 'Helper.pm'), helper('second'));
      const changed = await run();
      expect(changed.stderr).toContain(`changed hook Stop runs: ${perl}`);
      expect(existsSync(join(dir, 'second')), 'the pulled code ran unasked').toBe(false);
    });

    it("an MCP server with its entry's PYTHONPATH: not started, named, its new code not run", async () => {
      const { dir, run, pull } = await trusted(
        () => ({
          mcpServers: {
            checks: {
              command: 'python3',
              args: ['server.py'],
              env: { PYTHONPATH: 'lib' },
            },
          },
        }),
        // Not an MCP server: its start is what is looked at (the import runs first).
        { 'server.py': 'import helpers\nhelpers.mark()\n' },
        uid,
      );
      const first = await run();
      expect(existsSync(join(dir, 'first')), first.stderr).toBe(true);

      await pull();
      const changed = await run();
      expect(changed.stderr).toContain('changed since it was trusted');
      expect(changed.stderr).toContain('changed MCP server "checks" runs: python3 server.py');
      expect(existsSync(join(dir, 'second')), 'the pulled code ran unasked').toBe(false);
    });
  },
);

describe('trust pins with PYTHONPATH folders', () => {
  it('are what they were when no module is found there (trusted folders are not asked again)', async () => {
    const scratch = await tempDir('agent-trust-pythonpath-');
    cleanups.push(scratch.dispose);
    const project = scratch.path;
    await put(project, {
      'scripts/hooks/check.py': 'import json, os\nimport helpers\n',
      'scripts/hooks/helpers.py': 'x = 1\n',
      'lib/unrelated.py': 'y = 2\n',
    });
    const search = { python: pythonPathFolders('lib', project) };
    const plain = projectFileDigests([hookCommand], project);
    expect(Object.keys(plain ?? {}).sort()).toEqual([
      'scripts/hooks/check.py',
      'scripts/hooks/helpers.py',
    ]);
    expect(projectFileDigests([hookCommand], project, { search })).toEqual(plain);
    // Python looks in PYTHONPATH first: a module there is pinned (and only then the pin differs).
    await put(project, { 'lib/json.py': 'z = 3\n' });
    expect(Object.keys(projectFileDigests([hookCommand], project, { search }) ?? {})).toContain(
      'lib/json.py',
    );
  });
});

describe('a PYTHONPATH a hook script sets for the Python it runs', () => {
  it('is searched for the files pinned after it (a trust pin too)', async () => {
    const scratch = await tempDir('agent-trust-pythonpath-');
    cleanups.push(scratch.dispose);
    const project = scratch.path;
    await put(project, {
      'scripts/hooks/check.sh': `export PYTHONPATH="lib"\n${hookCommand}\n`,
      'scripts/hooks/check.py': 'import helpers\n',
      'lib/helpers.py': 'x = 1\n',
    });
    expect(Object.keys(projectFileDigests(['sh scripts/hooks/check.sh'], project) ?? {})).toEqual(
      expect.arrayContaining(['scripts/hooks/check.py', 'lib/helpers.py']),
    );
  });
});
