// Trust is pinned to the project files a hook or MCP server runs, not only to its command line:
// a `git pull` that changes `.agent/hooks/fmt.sh` (or the server's script, or package.json's
// script an `npm run` runs) must not run the new code unasked.
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
  runCli,
  shellQuoted,
  tempDir,
  writeScript,
} from '../testing/test-support.js';
import { projectFileDigests } from './trust-scripts.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
beforeAll(() => assertBuilt());

async function scratch(): Promise<string> {
  const dir = await tempDir('agent-trust-scripts-');
  cleanups.push(dir.dispose);
  return dir.path;
}

describe('projectFileDigests', () => {
  it('pins the project files python -m finds first for its module', async () => {
    const project = await scratch();
    await mkdir(join(project, 'tools', 'check'), { recursive: true });
    await writeFile(join(project, 'json.py'), 'x = 1\n');
    await writeFile(join(project, 'tools', '__init__.py'), '');
    await writeFile(join(project, 'tools', 'check', '__main__.py'), 'print(1)\n');
    const pinned = (command: string) =>
      Object.keys(projectFileDigests([command], project) ?? {}).sort();
    expect(pinned('python3 -m json.tool')).toEqual(['json.py']);
    expect(pinned('/usr/bin/python3.12 -m tools.check')).toEqual([
      'tools/__init__.py',
      'tools/check/__main__.py',
    ]);
    // Not after another program, nor for a script's path.
    expect(pinned('black json')).toEqual([]);
    expect(pinned('python3 tools/__init__.py')).toEqual(['tools/__init__.py']);
  });

  it("pins the package runners' project config and what it names (npx, npm, yarn, pnpm, bun)", async () => {
    const project = await scratch();
    await writeFile(join(project, 'package.json'), '{"scripts":{"lint":"x"}}');
    await writeFile(join(project, '.npmrc'), 'script-shell=./shell.sh\n');
    await writeFile(join(project, 'shell.sh'), 'exec sh "$@"\n');
    await mkdir(join(project, '.yarn'));
    await writeFile(join(project, '.yarnrc.yml'), 'yarnPath: .yarn/yarn.cjs\n');
    await writeFile(join(project, '.yarn', 'yarn.cjs'), 'module.exports = 1;\n');
    await writeFile(join(project, 'bunfig.toml'), 'preload = ["./pre.ts"]\n');
    await writeFile(join(project, 'pre.ts'), 'export {};\n');
    const pinned = (command: string) =>
      Object.keys(projectFileDigests([command], project) ?? {}).sort();
    expect(pinned('npx tool')).toEqual(['.npmrc', 'shell.sh']);
    expect(pinned('/usr/local/bin/npm run lint')).toEqual(['.npmrc', 'package.json', 'shell.sh']);
    expect(pinned('yarn lint')).toEqual([
      '.npmrc',
      '.yarn/yarn.cjs',
      '.yarnrc.yml',
      'package.json',
      'shell.sh',
    ]);
    expect(pinned('bunx tool')).toEqual(['bunfig.toml', 'pre.ts']);
  });

  it("pins a formatter's package.json key and the files it names, not the rest of package.json", async () => {
    const project = await scratch();
    const manifest = (extra: object) =>
      writeFile(join(project, 'package.json'), JSON.stringify({ name: 'a', ...extra }));
    await manifest({});
    expect(projectFileDigests(['npx prettier --write .'], project)).toBeUndefined();
    await writeFile(join(project, 'shared.cjs'), 'module.exports = {};\n');
    await manifest({ prettier: './shared' });
    const pinned = projectFileDigests(['npx prettier --write .'], project);
    expect(Object.keys(pinned ?? {}).sort()).toEqual(['package.json#prettier', 'shared.cjs']);
    // A dependency added: the work changes package.json, not what prettier loads.
    await manifest({ prettier: './shared', dependencies: { x: '1' } });
    expect(projectFileDigests(['npx prettier --write .'], project)).toEqual(pinned);
    await writeFile(join(project, 'shared.cjs'), 'require("child_process");\n');
    expect(projectFileDigests(['npx prettier --write .'], project)).not.toEqual(pinned);
    await manifest({ 'lint-staged': { '*.js': 'eslint --fix' } });
    expect(Object.keys(projectFileDigests(['npx lint-staged'], project) ?? {})).toEqual([
      'package.json#lint-staged',
    ]);
    await manifest({ eslintConfig: { extends: ['./rules.js'] } });
    await writeFile(join(project, 'rules.js'), 'module.exports = {};\n');
    expect(Object.keys(projectFileDigests(['eslint .'], project) ?? {}).sort()).toEqual([
      'package.json#eslintConfig',
      'rules.js',
    ]);
  });

  it('pins the project files a command names, and what a runner reads; nothing for a plain command', async () => {
    const project = await scratch();
    await mkdir(join(project, '.agent', 'hooks'), { recursive: true });
    await writeFile(join(project, '.agent', 'hooks', 'fmt.sh'), 'echo one\n');
    await writeFile(join(project, 'package.json'), '{"scripts":{"lint":"eslint ."}}');
    await writeFile(join(project, 'server.mjs'), 'console.log(1)\n');
    const fmt = projectFileDigests(['./.agent/hooks/fmt.sh --fix'], project);
    expect(Object.keys(fmt ?? {})).toEqual(['.agent/hooks/fmt.sh']);
    expect(projectFileDigests(['"$CLAUDE_PROJECT_DIR"/.agent/hooks/fmt.sh'], project)).toEqual(fmt);
    expect(Object.keys(projectFileDigests(['npm run lint'], project) ?? {})).toEqual([
      'package.json',
    ]);
    expect(Object.keys(projectFileDigests(['node', 'server.mjs'], project) ?? {})).toEqual([
      'server.mjs',
    ]);
    expect(projectFileDigests(['git status --short'], project)).toBeUndefined();
    // A folder whose name starts with two dots is inside the project (it was taken for `../`, so
    // `./..hooks/run.sh` went unpinned and a pull could change it unasked).
    await mkdir(join(project, '..hooks'));
    await writeFile(join(project, '..hooks', 'run.sh'), 'echo one\n');
    expect(Object.keys(projectFileDigests(['./..hooks/run.sh'], project) ?? {})).toEqual([
      '..hooks/run.sh',
    ]);
    // Outside the project (the user's own files): not pinned here.
    expect(projectFileDigests(['cat /etc/hostname ../x'], project)).toBeUndefined();
    await writeFile(join(project, '.agent', 'hooks', 'fmt.sh'), 'echo two\n');
    expect(projectFileDigests(['./.agent/hooks/fmt.sh --fix'], project)).not.toEqual(fmt);
    // A project link to a file outside it (one anyone may rewrite) is pinned by what it leads to.
    const outside = await scratch();
    await writeFile(join(outside, 'run.sh'), 'echo one\n');
    await symlink(join(outside, 'run.sh'), join(project, 'linked.sh'));
    const linked = projectFileDigests(['sh linked.sh'], project);
    expect(Object.keys(linked ?? {})).toEqual(['linked.sh']);
    await writeFile(join(outside, 'run.sh'), 'echo two\n');
    expect(projectFileDigests(['sh linked.sh'], project)).not.toEqual(linked);
  });
});

describe('projectFileDigests of formatters and linters', () => {
  it('pins the project-root configs they load as code, however they are run', async () => {
    const project = await scratch();
    await writeFile(join(project, '.prettierrc.cjs'), 'module.exports = {};\n');
    await writeFile(join(project, 'eslint.config.js'), 'export default [];\n');
    for (const command of [
      'npx prettier --write .',
      'prettier --check src',
      './node_modules/.bin/prettier --write .',
      'npx prettier@3 --write .',
      'pnpm exec prettier --write .',
    ])
      expect(Object.keys(projectFileDigests([command], project) ?? {}), command).toEqual([
        '.prettierrc.cjs',
      ]);
    expect(Object.keys(projectFileDigests(['npx eslint --fix .'], project) ?? {})).toEqual([
      'eslint.config.js',
    ]);
    // A config that is not there yet is not pinned; one written later changes the pin.
    expect(projectFileDigests(['npx stylelint "**/*.css"'], project)).toBeUndefined();
    await writeFile(join(project, '.stylelintrc.mjs'), 'export default {};\n');
    expect(Object.keys(projectFileDigests(['npx stylelint "**/*.css"'], project) ?? {})).toEqual([
      '.stylelintrc.mjs',
    ]);
  });

  it("takes a word that names an object's own method for no runner (it threw)", async () => {
    const project = await scratch();
    expect(
      projectFileDigests(['echo constructor toString hasOwnProperty __proto__'], project),
    ).toBeUndefined();
    expect(projectFileDigests(['npx constructor'], project)).toBeUndefined();
  });
});

describe('a trusted folder whose hook script changes', () => {
  it('runs the hook as trusted; after the script changes it is withheld and named, until trusted again', async () => {
    const dir = await scratch();
    const home = join(dir, 'home');
    const workspace = join(dir, 'repo');
    await mkdir(join(workspace, '.agent', 'hooks'), { recursive: true });
    await mkdir(home);
    const marker = (name: string) => join(dir, name);
    const hook = join(workspace, '.agent', 'hooks', 'stop.sh');
    await writeFile(hook, `#!/bin/sh\ntouch ${shellQuoted(marker('first'))}\n`, { mode: 0o755 });
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({
        hooks: { Stop: [{ hooks: [{ type: 'command', command: './.agent/hooks/stop.sh' }] }] },
      }),
    );
    const env = cleanEnv({ AGENT_HOME: home });
    expect((await runCli(['trust', '--cwd', workspace], { env })).code).toBe(0);
    const script = await writeScript(dir, [{ text: 'done' }]);
    const run = () => runCli(['-p', 'go', '--scripted', script, '--cwd', workspace], { env });

    const first = await run();
    expect(first.code, first.stderr).toBe(0);
    expect(existsSync(marker('first'))).toBe(true);

    // A `git pull` rewrites the script; the settings file is as it was.
    await writeFile(hook, `#!/bin/sh\ntouch ${shellQuoted(marker('second'))}\n`, { mode: 0o755 });
    const changed = await run();
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stderr).toContain('changed since it was trusted');
    expect(changed.stderr).toContain('changed hook Stop runs: ./.agent/hooks/stop.sh');
    expect(existsSync(marker('second'))).toBe(false);

    expect((await runCli(['trust', '--cwd', workspace], { env })).code).toBe(0);
    expect((await run()).code).toBe(0);
    expect(existsSync(marker('second'))).toBe(true);
  });
});

describe('a trusted PYTHONPATH', () => {
  it('a sitecustomize.py a pull adds in its folder asks again; the python hook does not load it', async (context) => {
    skipWithout('python3')(context);
    const dir = await scratch();
    const home = join(dir, 'home');
    const workspace = join(dir, 'repo');
    const escaped = join(dir, 'escaped');
    await mkdir(join(workspace, '.agent'), { recursive: true });
    await mkdir(home);
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({
        env: { PYTHONPATH: '.' },
        hooks: { Stop: [{ hooks: [{ type: 'command', command: 'python3 -c pass' }] }] },
      }),
    );
    const env = cleanEnv({ AGENT_HOME: home });
    expect((await runCli(['trust', '--cwd', workspace], { env })).code).toBe(0);
    // The pull: a new file, no settings changed.
    await writeFile(
      join(workspace, 'sitecustomize.py'),
      `open(${JSON.stringify(escaped)}, 'w').write('x')\n`,
    );
    const script = await writeScript(dir, [{ text: 'done' }]);
    const run = await runCli(['-p', 'go', '--scripted', script, '--cwd', workspace], { env });
    expect(existsSync(escaped), 'the hook loaded the new sitecustomize.py').toBe(false);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('changed since it was trusted');
    expect(run.stderr).toContain('env PYTHONPATH=.');
  });
});
