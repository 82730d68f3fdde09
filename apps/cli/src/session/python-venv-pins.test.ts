// A trusted hook runs the project's virtual environment (`.venv/bin/python scripts/check.py`,
// `.venv/bin/ruff`): that python processes every `.pth` file of the environment's site-packages
// at its start — an `import` line in one runs — and loads its `sitecustomize.py`. The
// environment lies in the workspace, which a sandboxed command may write: a `.pth` it made ran
// as the user, outside the sandbox, at the next hook, every pinned file unchanged. Real CLI, real
// bubblewrap, a real venv.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectFileDigests } from '../config/trust-scripts.js';
import type { Turn } from '../testing/messages-server.js';
import { tempDir, testUsers } from '../testing/test-support.js';
import {
  expectRanAfterEachCall,
  expectStoppedAfterChange,
  hookSessionSuite,
  plantTurns,
  runHookSession,
  untouchedTurns,
} from '../testing/trusted-hook-session.js';

const cleanups = hookSessionSuite('bwrap', 'python3');

/** The site-packages folder of the venv at `venv`, relative to the repository. */
function sitePackages(repo: string): string {
  const version = readdirSync(join(repo, '.venv', 'lib')).find((name) => name.startsWith('python'));
  if (version === undefined) throw new Error('the venv has no lib/python*');
  return join('.venv', 'lib', version, 'site-packages');
}

// Set once the venv is made (python3.11 or another), before the turns are asked for.
let site = '';

/** A trusted repository whose PostToolUse hook runs its own venv's python. */
function runWithVenvHook(turns: (outside: string) => Turn[], uid: number | undefined) {
  return runHookSession({
    turns,
    cleanups,
    uid,
    setup: {
      command: '.venv/bin/python scripts/hooks/check.py',
      files: { 'scripts/hooks/check.py': "open('OUTSIDE/hook-ran', 'a').write('ran\\n')\n" },
    },
    prepare: async (repo) => {
      // The system's python where there is one: every user may run it (pyenv's lies under /root).
      const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
      execFileSync(python, ['-m', 'venv', '--without-pip', join(repo, '.venv')]);
      site = sitePackages(repo);
    },
  });
}

const escaping = (outside: string) =>
  `import os; open(${JSON.stringify(join(outside, 'escaped'))}, 'w').write('x')\n`;

describe.each(testUsers)("a trusted hook's venv python ($label)", ({ uid }) => {
  it.each([
    ['a .pth file in its site-packages', 'zz-planted.pth'],
    ['a sitecustomize.py in its site-packages', 'sitecustomize.py'],
  ])('%s written during the session does not run outside the sandbox', async (_what, name) => {
    expectStoppedAfterChange(
      await runWithVenvHook(
        (outside) => [
          { tool: { name: 'list_files', input: { path: '.' } } },
          {
            tool: {
              name: 'write_file',
              input: { path: join(site, name), content: escaping(outside) },
            },
          },
          { tool: { name: 'list_files', input: { path: '.' } } },
          { text: 'done' },
        ],
        uid,
      ),
      { command: '.venv/bin/python scripts/hooks/check.py', ranBefore: 1 },
    );
  });

  it('an untouched venv hook runs after every call', async () => {
    expectRanAfterEachCall(await runWithVenvHook(untouchedTurns, uid));
  });
});

describe("projectFileDigests: a venv's start-up files are pinned with its programs", () => {
  it.each([
    ['.venv/bin/python scripts/check.py', 'zz-planted.pth'],
    ['.venv/bin/black .', 'zz-planted.pth'],
    ['.venv/bin/python scripts/check.py', 'sitecustomize.py'],
    ['.venv/bin/python3 -m pytest', 'usercustomize.pyc'],
  ])('%s: a %s made in site-packages changes the pin', async (command, made) => {
    const dir = await tempDir('agent-cli-venv-forms-');
    cleanups.push(dir.dispose);
    const repo = dir.path;
    const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
    execFileSync(python, ['-m', 'venv', '--without-pip', join(repo, '.venv')]);
    await mkdir(join(repo, 'scripts'));
    await writeFile(join(repo, 'scripts', 'check.py'), 'print(1)\n');
    await writeFile(join(repo, '.venv', 'bin', 'black'), '#!/bin/sh\n');
    const site = sitePackages(repo);
    await writeFile(join(repo, site, 'distutils-precedence.pth'), 'import os\n');
    const looked = new Set<string>();
    const before = projectFileDigests([command], repo, { looked });
    expect(Object.keys(before ?? {})).toEqual(
      expect.arrayContaining(['.venv/pyvenv.cfg', join(site, 'distutils-precedence.pth')]),
    );
    // Where a new one would be made is looked at (the folder's stat changes).
    expect(looked).toContain(join(realpathSync(repo), site));
    await writeFile(join(repo, site, made), 'import os\n');
    expect(Object.keys(projectFileDigests([command], repo) ?? {})).toContain(join(site, made));
  });
});

describe.each(testUsers)("a package a trusted hook's venv program imports ($label)", ({ uid }) => {
  const command = '.venv/bin/lint-tool --check';
  function runWithVenvTool(turns: (outside: string) => Turn[]) {
    return runHookSession({
      turns,
      cleanups,
      uid,
      setup: { command, files: {} },
      prepare: async (repo) => {
        const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
        execFileSync(python, ['-m', 'venv', '--without-pip', join(repo, '.venv')]);
        site = sitePackages(repo);
        // As pip installs a console script: the venv's python, importing its package.
        await writeFile(
          join(repo, '.venv', 'bin', 'lint-tool'),
          `#!${join(repo, '.venv', 'bin', 'python')}\nfrom linttool import main\nmain()\n`,
          { mode: 0o755 },
        );
        await mkdir(join(repo, site, 'linttool'));
        await writeFile(join(repo, site, 'linttool', '__init__.py'), 'from .cli import main\n');
        await writeFile(
          join(repo, site, 'linttool', 'cli.py'),
          `def main():\n    open(${JSON.stringify(join(repo, '..', 'outside', 'hook-ran'))}, 'a').write('ran\\n')\n`,
        );
      },
    });
  }

  it('rewritten by a sandboxed command, it does not run outside the sandbox', async () => {
    expectStoppedAfterChange(
      await runWithVenvTool((outside) => [
        { tool: { name: 'list_files', input: { path: '.' } } },
        {
          tool: {
            name: 'write_file',
            input: {
              path: join(site, 'linttool', 'cli.py'),
              content: `def main():\n    open(${JSON.stringify(join(outside, 'escaped'))}, 'w')\n`,
            },
          },
        },
        { tool: { name: 'list_files', input: { path: '.' } } },
        { text: 'done' },
      ]),
      { command, ranBefore: 1 },
    );
  });

  it('untouched, it runs after every call', async () => {
    expectRanAfterEachCall(await runWithVenvTool(untouchedTurns));
  });
});

describe.each(testUsers)(
  'a package a project script imports from the venv that runs it ($label)',
  ({ uid }) => {
    // `.venv/bin/python scripts/hooks/check.py`: the script lies outside the venv, but what it
    // imports (`import reporter`, installed in the venv) loads from the venv's site-packages.
    const command = '.venv/bin/python scripts/hooks/check.py';
    function runWithVenvScript(turns: (outside: string) => Turn[]) {
      return runHookSession({
        turns,
        cleanups,
        uid,
        setup: {
          command,
          files: { 'scripts/hooks/check.py': 'import reporter\nreporter.run()\n' },
        },
        prepare: async (repo) => {
          const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
          execFileSync(python, ['-m', 'venv', '--without-pip', join(repo, '.venv')]);
          site = sitePackages(repo);
          await writeFile(
            join(repo, site, 'reporter.py'),
            `def run():\n    open(${JSON.stringify(join(repo, '..', 'outside', 'hook-ran'))}, 'a').write('ran\\n')\n`,
          );
        },
      });
    }

    it('rewritten by a sandboxed command, it does not run outside the sandbox', async () => {
      expectStoppedAfterChange(
        await runWithVenvScript((outside) =>
          plantTurns([
            {
              tool: {
                name: 'write_file',
                input: {
                  path: join(site, 'reporter.py'),
                  content: `def run():\n    open(${JSON.stringify(join(outside, 'escaped'))}, 'w')\n`,
                },
              },
            },
          ]),
        ),
        { command, ranBefore: 1 },
      );
    });

    it('untouched, it runs after every call', async () => {
      expectRanAfterEachCall(await runWithVenvScript(untouchedTurns));
    });
  },
);
