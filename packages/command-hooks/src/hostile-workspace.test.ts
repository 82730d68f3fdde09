import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  anyUserDirectory,
  skipWithout,
  stagePackagesForAnyUser,
} from '@agent/tooling-system-tools';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Cleanups,
  createFixture,
  type Fixture,
  fixtures,
  packageDir,
  settingsSecret,
  users,
} from './__fixtures__/sandbox-fixture.js';

// A hostile repository and the user's innocent hooks (a formatter that loads the project's config,
// git status, a hook that prints what it can read): in the OS sandbox (real bubblewrap), as root
// and as nobody, the repository's code runs but writes only in the workspace, reads no key and
// plants nothing in .git. Unsandboxed, the same fixture does all of that: each vector is live.

const cleanups: Cleanups = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});
const fixture = () => createFixture(cleanups);

// The built packages, where a user who cannot enter the repository (a clone in a 0700 folder, a
// checkout under /root) still reads them: the runner imports them from there as every user.
const staging = anyUserDirectory('command-hooks-packages-');
stagePackagesForAnyUser(packageDir, ['@agent/command-hooks', '@agent/sandbox'], staging.path);
afterAll(() => staging.dispose());
const staged = (name: string) => path.join(staging.path, 'node_modules', name, 'dist', 'index.js');

/**
 * The hostile repository: a git repository whose .git/config runs the payload on every `git
 * status` (core.fsmonitor), and whose prettier.config.mjs runs it when a formatter loads it.
 */
function plantHostileRepository({ workspace, node }: { workspace: string; node: string }) {
  fs.copyFileSync(path.join(fixtures, 'hostile-payload.mjs'), path.join(workspace, 'payload.mjs'));
  fs.writeFileSync(
    path.join(workspace, 'prettier.config.mjs'),
    `import { execFileSync } from 'node:child_process';\nexecFileSync(process.execPath, ['payload.mjs', 'prettier']);\nexport default {};\n`,
  );
  fs.writeFileSync(path.join(workspace, 'src.js'), '   const answer = 42;   \n');
  const git = (...args: string[]) =>
    expect(spawnSync('git', args, { cwd: workspace }).status).toBe(0);
  git('init', '-q');
  git(
    'config',
    'core.fsmonitor',
    `${JSON.stringify(node)} ${JSON.stringify(path.join(workspace, 'payload.mjs'))} fsmonitor; true`,
  );
}

interface PayloadReport {
  uid: number;
  outsideWrite: { ok: boolean };
  profileAppend: { ok: boolean };
  sshKey: { ok: boolean; value?: string };
  settings: { ok: boolean; value?: string };
  gitConfig: { ok: boolean };
  gitHook: { ok: boolean };
}

function report(workspace: string, label: string): PayloadReport {
  return JSON.parse(fs.readFileSync(path.join(workspace, `report-${label}.json`), 'utf8'));
}

interface RunnerResult {
  after: { content: { type: string; text: string }[] } | undefined;
  sessionContext: string;
  submitted: { prompt?: string; blocked?: string };
  warnings: string[];
}

/** Runs __fixtures__/hostile-hooks-runner.mjs (the built packages) as `uid`, or as this user. */
async function runHostileHooks(
  paths: Fixture,
  options: { sandboxed: boolean; uid?: number; sessionStart?: string },
): Promise<RunnerResult> {
  const tools = path.join(paths.base, 'tools');
  fs.mkdirSync(tools);
  fs.copyFileSync(path.join(fixtures, 'fake-prettier.mjs'), path.join(tools, 'fake-prettier.mjs'));
  const runner = path.join(paths.base, 'runner.mjs');
  fs.copyFileSync(path.join(fixtures, 'hostile-hooks-runner.mjs'), runner);
  const input = path.join(paths.base, 'input.json');
  fs.writeFileSync(
    input,
    JSON.stringify({
      commandHooks: staged('@agent/command-hooks'),
      sandboxPackage: staged('@agent/sandbox'),
      workspace: paths.workspace,
      home: paths.home,
      agentHome: paths.agentHome,
      tools,
      sandboxed: options.sandboxed,
      ...(options.sessionStart === undefined ? {} : { sessionStart: options.sessionStart }),
    }),
  );
  if (options.uid !== undefined)
    spawnSync('chown', ['-R', `${options.uid}:${options.uid}`, paths.base]);
  const command = [paths.node, runner, input];
  const child = spawn(
    options.uid === undefined ? paths.node : 'setpriv',
    options.uid === undefined
      ? command.slice(1)
      : [`--reuid=${options.uid}`, `--regid=${options.uid}`, '--clear-groups', ...command],
    {
      cwd: paths.base,
      env: {
        PATH: process.env.PATH,
        HOME: paths.home,
        HOSTILE_WORKSPACE: paths.workspace,
        HOSTILE_OUTSIDE: paths.outside,
        HOSTILE_AGENT_HOME: paths.agentHome,
        // The settings' env is in the CLI's environment: a name that says token is withheld.
        DEPLOY_TOKEN: settingsSecret,
        OPENAI_API_KEY: `sk-proj-${'Ab3'.repeat(16)}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`the runner exited ${code}: ${stderr}`);
  return JSON.parse(stdout) as RunnerResult;
}

describe.each(users)('the user’s innocent hooks in a hostile workspace, as $label', ({ uid }) => {
  beforeEach(skipWithout('bwrap'));

  it('sandboxed: the formatter’s config and git’s fsmonitor run, but reach nothing outside the workspace', async () => {
    const paths = fixture();
    plantHostileRepository(paths);
    const gitConfigBefore = fs.readFileSync(path.join(paths.workspace, '.git', 'config'), 'utf8');
    const result = await runHostileHooks(paths, {
      sandboxed: true,
      ...(uid === undefined ? {} : { uid }),
    });
    // The hooks did their job: the formatter formatted, git status listed the files.
    expect(fs.readFileSync(path.join(paths.workspace, 'src.js'), 'utf8')).toBe(
      'const answer = 42;\n',
    );
    expect(result.sessionContext).toContain('?? src.js');
    expect(result.warnings).toEqual([]);
    for (const label of ['prettier', 'fsmonitor']) {
      // The repository's code ran (the sandbox confines it, it does not stop it)...
      const found = report(paths.workspace, label);
      expect(found.uid).toBe(uid ?? process.getuid?.());
      // ...and got nowhere.
      expect(found.outsideWrite.ok, label).toBe(false);
      expect(found.profileAppend.ok, label).toBe(false);
      expect(found.sshKey.value ?? '', label).not.toContain('hostile-test-key');
      expect(found.settings.value ?? '', label).not.toContain(settingsSecret);
      expect(found.gitConfig.ok, label).toBe(false);
      expect(found.gitHook.ok, label).toBe(false);
    }
    expect(fs.readdirSync(paths.outside)).toEqual([]);
    expect(fs.readFileSync(path.join(paths.home, '.profile'), 'utf8')).toBe('original\n');
    expect(fs.readFileSync(path.join(paths.workspace, '.git', 'config'), 'utf8')).toBe(
      gitConfigBefore,
    );
    expect(fs.existsSync(path.join(paths.workspace, '.git', 'hooks', 'post-checkout'))).toBe(false);
    // The hook that reads the key, the settings and its environment finds none of them.
    const prompt = result.submitted.prompt ?? '';
    expect(prompt).toContain('hello');
    expect(prompt).toContain('HOSTILE_WORKSPACE=');
    expect(prompt).not.toContain('hostile-test-key');
    expect(prompt).not.toContain(settingsSecret);
    expect(prompt).not.toContain('sk-proj-');
  });
});

/**
 * More ways a repository runs its code through a hook that looks innocent: each plants the
 * payload (labelled `vector`) and names the user's hook that runs it.
 */
const vectors: {
  name: string;
  hook: string;
  plant: (paths: Fixture, git: (...args: string[]) => void) => void;
}[] = [
  {
    name: 'git status runs a clean filter of .gitattributes',
    hook: 'git status --porcelain',
    plant: ({ workspace, node }, git) => {
      fs.writeFileSync(path.join(workspace, 'notes.txt'), 'one\n');
      git('add', 'notes.txt');
      git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'notes');
      fs.writeFileSync(path.join(workspace, '.gitattributes'), '*.txt filter=tidy\n');
      git('config', 'filter.tidy.clean', `${JSON.stringify(node)} payload.mjs vector >&2; cat`);
      // Same size, newer time: git must read the content through the filter to compare.
      fs.writeFileSync(path.join(workspace, 'notes.txt'), 'two\n');
    },
  },
  {
    name: 'git diff runs diff.external',
    hook: 'git diff',
    plant: ({ workspace, node }, git) => {
      fs.writeFileSync(path.join(workspace, 'notes.txt'), 'one\n');
      git('add', 'notes.txt');
      git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'notes');
      git('config', 'diff.external', `${JSON.stringify(node)} payload.mjs vector; true`);
      fs.writeFileSync(path.join(workspace, 'notes.txt'), 'changed\n');
    },
  },
  {
    name: 'git status reads an include.path config that sets core.fsmonitor',
    hook: 'git status --short',
    plant: ({ workspace, node }, git) => {
      fs.writeFileSync(
        path.join(workspace, 'tools.gitconfig'),
        `[core]\n\tfsmonitor = ${JSON.stringify(node).replaceAll('"', '\\"')} payload.mjs vector; true\n`,
      );
      git('config', 'include.path', '../tools.gitconfig');
    },
  },
  {
    name: 'make runs the repository’s Makefile',
    hook: 'make -s fmt',
    plant: ({ workspace, node }) => {
      fs.writeFileSync(path.join(workspace, 'Makefile'), `fmt:\n\t${node} payload.mjs vector\n`);
    },
  },
  {
    name: 'npm run runs the repository’s package.json script',
    hook: 'npm run -s format',
    plant: ({ workspace, node }) => {
      fs.writeFileSync(
        path.join(workspace, 'package.json'),
        JSON.stringify({ name: 'x', scripts: { format: `${node} payload.mjs vector` } }),
      );
    },
  },
];

/** The payload and a git repository in the workspace, then the vector's own plant. */
function plantVector(paths: Fixture, vector: (typeof vectors)[number]) {
  fs.copyFileSync(
    path.join(fixtures, 'hostile-payload.mjs'),
    path.join(paths.workspace, 'payload.mjs'),
  );
  const git = (...args: string[]) =>
    expect(spawnSync('git', args, { cwd: paths.workspace }).status).toBe(0);
  git('init', '-q');
  vector.plant(paths, git);
}

describe.each(users)('more ways through an innocent hook, sandboxed, as $label', ({ uid }) => {
  beforeEach(skipWithout('bwrap'));

  it.each(vectors)('$name: it runs, and reaches nothing outside', async (vector) => {
    const paths = fixture();
    plantVector(paths, vector);
    await runHostileHooks(paths, {
      sandboxed: true,
      sessionStart: vector.hook,
      ...(uid === undefined ? {} : { uid }),
    });
    const found = report(paths.workspace, 'vector');
    expect(found.outsideWrite.ok).toBe(false);
    expect(found.profileAppend.ok).toBe(false);
    expect(found.sshKey.value ?? '').not.toContain('hostile-test-key');
    expect(found.settings.value ?? '').not.toContain(settingsSecret);
    expect(found.gitConfig.ok).toBe(false);
    expect(fs.readdirSync(paths.outside)).toEqual([]);
  });
});

describe('the same ways unsandboxed (the control: each vector is live)', () => {
  it.each(vectors)('$name: it writes outside and reads the key', async (vector) => {
    const paths = fixture();
    plantVector(paths, vector);
    await runHostileHooks(paths, { sandboxed: false, sessionStart: vector.hook });
    const found = report(paths.workspace, 'vector');
    expect(found.outsideWrite.ok).toBe(true);
    expect(found.sshKey.value).toContain('hostile-test-key');
  });
});

describe('control: the same hooks unsandboxed (a trusted folder)', () => {
  it('let the repository write outside, read the key and plant git config — what the sandbox stops', async () => {
    const paths = fixture();
    plantHostileRepository(paths);
    const result = await runHostileHooks(paths, { sandboxed: false });
    for (const label of ['prettier', 'fsmonitor']) {
      const found = report(paths.workspace, label);
      expect(found.outsideWrite.ok, label).toBe(true);
      expect(found.sshKey.value, label).toContain('hostile-test-key');
      expect(found.gitConfig.ok, label).toBe(true);
    }
    expect(fs.readdirSync(paths.outside).sort()).toEqual(['pwned-fsmonitor', 'pwned-prettier']);
    expect(result.submitted.prompt).toContain('hostile-test-key');
  });
});
