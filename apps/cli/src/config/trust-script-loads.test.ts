// A trusted hook's pin covers the project files its script loads, not only the file the command
// names: `node ./hooks/run.mjs` importing `./lib.mjs`, `bash hook.sh` sourcing `./env.sh`, a
// Python script's own modules, a Makefile's includes, package.json's scripts, an env value's
// `--require ./x.js`. A `git pull` that changes a loaded file is asked again (REPL) or left out
// with a notice (-p), like one that changes the script itself.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';
import { maxPinnedFiles, projectFileDigests } from './trust-scripts.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
beforeAll(() => assertBuilt());

async function scratch(): Promise<string> {
  const dir = await tempDir('agent-trust-loads-');
  cleanups.push(dir.dispose);
  return dir.path;
}

async function put(root: string, files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, name)), { recursive: true });
    await writeFile(join(root, name), text, { mode: 0o755 });
  }
}

/** A command, the files of its project, and one it loads (not named by the command). */
interface Case {
  name: string;
  command: string;
  files: Record<string, string>;
  loaded: string;
}

const cases: Case[] = [
  {
    name: 'node: a static import without the extension',
    command: 'node ./hooks/run.mjs',
    files: { 'hooks/run.mjs': "import { go } from './lib';\ngo();\n", 'hooks/lib.mjs': 'x' },
    loaded: 'hooks/lib.mjs',
  },
  {
    name: 'node: an import two steps down (run → lib → deep)',
    command: 'node hooks/run.mjs',
    files: {
      'hooks/run.mjs': "import './lib.mjs';\n",
      'hooks/lib.mjs': "export * from '../shared/deep.js';\n",
      'shared/deep.js': 'x',
    },
    loaded: 'shared/deep.js',
  },
  {
    name: 'node: require() and a folder index',
    command: 'node hooks/run.cjs',
    files: { 'hooks/run.cjs': "require('./util');\n", 'hooks/util/index.js': 'x' },
    loaded: 'hooks/util/index.js',
  },
  {
    name: 'node: a package vendored in node_modules',
    command: 'node hooks/run.mjs',
    files: {
      'hooks/run.mjs': "import 'helper-pkg';\n",
      'node_modules/helper-pkg/package.json': '{"main": "main.js"}',
      'node_modules/helper-pkg/main.js': 'x',
    },
    loaded: 'node_modules/helper-pkg/main.js',
  },
  {
    name: 'node: a script it spawns by a string literal',
    command: 'node hooks/run.mjs',
    files: {
      'hooks/run.mjs':
        "import { execSync } from 'node:child_process';\nexecSync('sh scripts/real.sh');\n",
      'scripts/real.sh': 'x',
    },
    loaded: 'scripts/real.sh',
  },
  {
    name: 'bash: source ./env.sh',
    command: 'bash .agent/hooks/check.sh',
    files: { '.agent/hooks/check.sh': 'source ./env.sh\necho ok\n', 'env.sh': 'x' },
    loaded: 'env.sh',
  },
  {
    name: 'sh: . "$(dirname "$0")/lib.sh"',
    command: './.agent/hooks/check.sh',
    files: {
      '.agent/hooks/check.sh': '#!/bin/sh\n. "$(dirname "$0")/lib.sh"\n',
      '.agent/hooks/lib.sh': 'x',
    },
    loaded: '.agent/hooks/lib.sh',
  },
  {
    name: 'sh: "$DIR/more.sh" after DIR=$(cd "$(dirname "$0")" && pwd)',
    command: 'sh hooks/check.sh',
    files: {
      'hooks/check.sh': 'DIR=$(cd "$(dirname "$0")" && pwd)\n. "$DIR/more.sh"\n',
      'hooks/more.sh': 'x',
    },
    loaded: 'hooks/more.sh',
  },
  {
    name: 'python: import helpers (beside the script)',
    command: 'python3 hooks/check.py',
    files: { 'hooks/check.py': 'import os, helpers\n', 'hooks/helpers.py': 'x' },
    loaded: 'hooks/helpers.py',
  },
  {
    name: 'python: from pkg import mod (the package __init__ runs too)',
    command: 'python3 hooks/check.py',
    files: {
      'hooks/check.py': 'from tools import mod\n',
      'tools/__init__.py': '',
      'tools/mod.py': 'x',
    },
    loaded: 'tools/mod.py',
  },
  {
    name: 'python: a relative import in a package',
    command: 'python3 pkg/main.py',
    files: { 'pkg/main.py': 'from .sibling import thing\n', 'pkg/sibling.py': 'x' },
    loaded: 'pkg/sibling.py',
  },
  {
    name: 'make: an include and a recipe’s script',
    command: 'make lint',
    files: {
      Makefile: 'include rules.mk\nlint:\n\tsh tools/lint.sh\n',
      'rules.mk': 'x',
      'tools/lint.sh': 'x',
    },
    loaded: 'tools/lint.sh',
  },
  {
    name: 'npm run: the script’s file and what it imports',
    command: 'npm run lint',
    files: {
      'package.json': '{"scripts": {"lint": "node scripts/lint.mjs"}}',
      'scripts/lint.mjs': "import './rules.mjs';\n",
      'scripts/rules.mjs': 'x',
    },
    loaded: 'scripts/rules.mjs',
  },
  {
    name: 'NODE_OPTIONS=--require ./setup.cjs (an env value)',
    command: '--require ./setup.cjs',
    files: { 'setup.cjs': "require('./more.cjs');\n", 'more.cjs': 'x' },
    loaded: 'more.cjs',
  },
];

describe('projectFileDigests follows what a pinned file loads', () => {
  it.each(cases)('$name', async ({ command, files, loaded }) => {
    const project = await scratch();
    await put(project, files);
    const before = projectFileDigests([command], project);
    expect(Object.keys(before ?? {})).toContain(loaded);
    // A pull changes only the loaded file: the pin differs.
    await writeFile(join(project, loaded), 'changed by a pull');
    expect(projectFileDigests([command], project)).not.toEqual(before);
  });

  it.each([
    ['npx eslint --fix', 'npx'],
    ['pnpm exec eslint .', 'pnpm exec'],
    ['npm run lint', 'a package.json script naming eslint'],
  ])('%s: the project’s node_modules/.bin/eslint and what it loads (%s)', async (command) => {
    const project = await scratch();
    await put(project, {
      'package.json': '{"scripts": {"lint": "eslint . && echo done"}}',
      'node_modules/eslint/bin/eslint.js': "require('../lib/api.js');\n",
      'node_modules/eslint/lib/api.js': 'x',
    });
    await mkdir(join(project, 'node_modules', '.bin'));
    await symlink('../eslint/bin/eslint.js', join(project, 'node_modules', '.bin', 'eslint'));
    const before = projectFileDigests([command], project);
    expect(Object.keys(before ?? {})).toEqual(
      expect.arrayContaining(['node_modules/.bin/eslint', 'node_modules/eslint/lib/api.js']),
    );
    await writeFile(join(project, 'node_modules', 'eslint', 'lib', 'api.js'), 'changed');
    expect(projectFileDigests([command], project)).not.toEqual(before);
  });

  it('a load cycle ends; a file outside the project is not pinned; at most maxPinnedFiles', async () => {
    const project = await scratch();
    const outside = await scratch();
    await writeFile(join(outside, 'secret.mjs'), 'x');
    await put(project, {
      'a.mjs': `import './b.mjs';\nimport '${join(outside, 'secret.mjs')}';\nimport '../x.mjs';\n`,
      'b.mjs': "import './a.mjs';\n",
    });
    expect(Object.keys(projectFileDigests(['node a.mjs'], project) ?? {}).sort()).toEqual([
      'a.mjs',
      'b.mjs',
    ]);
    const many: Record<string, string> = {};
    for (let i = 0; i < maxPinnedFiles + 20; i++)
      many[`m${i}.mjs`] = i + 1 < maxPinnedFiles + 20 ? `import './m${i + 1}.mjs';\n` : '';
    await put(project, many);
    expect(Object.keys(projectFileDigests(['node m0.mjs'], project) ?? {})).toHaveLength(
      maxPinnedFiles,
    );
  });
});

/** A trusted folder with one Stop hook; returns a run, and the loaded file to change. */
async function trustedHook(hook: string, files: Record<string, string>) {
  const dir = await scratch();
  const home = join(dir, 'home');
  const workspace = join(dir, 'repo');
  await mkdir(join(workspace, '.agent'), { recursive: true });
  await mkdir(home);
  execFileSync('git', ['init', '-q', workspace]);
  await put(workspace, files);
  await writeFile(
    join(workspace, '.agent', 'settings.json'),
    JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: hook }] }] } }),
  );
  const env = cleanEnv({ AGENT_HOME: home, CANARY_DIR: dir });
  expect((await runCli(['trust', '--cwd', workspace], { env })).code).toBe(0);
  const script = await writeScript(dir, [{ text: 'done' }]);
  const run = () => runCli(['-p', 'go', '--scripted', script, '--cwd', workspace], { env });
  return { dir, workspace, run };
}

describe('a trusted hook whose loaded file a pull changes (real processes)', () => {
  it.for<{
    name: string;
    hook: string;
    files: Record<string, string | ((canary: string) => string)>;
    loaded: string;
    tool: 'python3' | undefined;
  }>([
    {
      name: 'node importing ./lib.mjs',
      hook: 'node ./hooks/run.mjs',
      files: {
        'hooks/run.mjs': "import { mark } from './lib.mjs';\nmark();\n",
        'hooks/lib.mjs': (canary: string) =>
          `import { writeFileSync } from 'node:fs';\nexport function mark() { writeFileSync(process.env.CANARY_DIR + '/${canary}', ''); }\n`,
      },
      loaded: 'hooks/lib.mjs',
      tool: undefined,
    },
    {
      name: 'bash sourcing ./env.sh',
      hook: 'bash ./hooks/run.sh',
      files: {
        'hooks/run.sh': 'source ./hooks/env.sh\nmark\n',
        'hooks/env.sh': (canary: string) => `mark() { touch "$CANARY_DIR/${canary}"; }\n`,
      },
      loaded: 'hooks/env.sh',
      tool: undefined,
    },
    {
      name: 'python importing helpers',
      hook: 'python3 hooks/run.py',
      files: {
        'hooks/run.py': 'import helpers\nhelpers.mark()\n',
        'hooks/helpers.py': (canary: string) =>
          `import os\ndef mark():\n    open(os.environ['CANARY_DIR'] + '/${canary}', 'w').close()\n`,
      },
      loaded: 'hooks/helpers.py',
      tool: 'python3',
    },
  ])(
    '$name: trusted it runs; changed it is left out and named, until trusted again',
    async ({ hook, files, loaded, tool }, context) => {
      // node and bash run the CLI and its hooks here; python3 may be missing on a user's machine.
      if (tool !== undefined) skipWithout(tool)(context);
      const text = (canary: string) =>
        Object.fromEntries(
          Object.entries(files).map(([name, body]) => [
            name,
            typeof body === 'string' ? body : body(canary),
          ]),
        );
      const { dir, workspace, run } = await trustedHook(hook, text('first'));
      const first = await run();
      expect(first.code, first.stderr).toBe(0);
      expect(existsSync(join(dir, 'first'))).toBe(true);

      // The pull changes the loaded file only; the hook's command and script are as trusted.
      await put(workspace, { [loaded]: text('second')[loaded] ?? '' });
      const changed = await run();
      expect(changed.code, changed.stderr).toBe(0);
      expect(changed.stderr).toContain('changed since it was trusted');
      expect(changed.stderr).toContain(`changed hook Stop runs: ${hook}`);
      expect(existsSync(join(dir, 'second'))).toBe(false);
    },
  );
});

describe('a trusted env value naming a project file (real processes)', () => {
  it('NODE_OPTIONS=--require ./setup.cjs: a pull changing setup.cjs leaves the variable out, named', async () => {
    const dir = await scratch();
    const home = join(dir, 'home');
    const workspace = join(dir, 'repo');
    await mkdir(join(workspace, '.agent'), { recursive: true });
    await mkdir(home);
    execFileSync('git', ['init', '-q', workspace]);
    const setup = (canary: string) =>
      `require('node:fs').writeFileSync(${JSON.stringify(join(dir, canary))}, '');\n`;
    await put(workspace, { 'setup.cjs': setup('first') });
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({
        env: { NODE_OPTIONS: `--require ${join(workspace, 'setup.cjs')}` },
        hooks: { Stop: [{ hooks: [{ type: 'command', command: 'node -e 0' }] }] },
      }),
    );
    const env = cleanEnv({ AGENT_HOME: home });
    expect((await runCli(['trust', '--cwd', workspace], { env })).code).toBe(0);
    const script = await writeScript(dir, [{ text: 'done' }]);
    const run = () => runCli(['-p', 'go', '--scripted', script, '--cwd', workspace], { env });
    const first = await run();
    expect(first.code, first.stderr).toBe(0);
    expect(existsSync(join(dir, 'first'))).toBe(true);

    await put(workspace, { 'setup.cjs': setup('second') });
    const changed = await run();
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stderr).toContain('changed env NODE_OPTIONS=');
    expect(existsSync(join(dir, 'second'))).toBe(false);
  });
});
