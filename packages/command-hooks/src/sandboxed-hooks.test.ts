import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineTool, type PermissionRequest } from '@agent/core';
import { createSandbox, defaultSecretPaths, type Sandbox } from '@agent/sandbox';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { CommandHooks, HooksConfigError, parseHooksConfig } from './index.js';

// The user's own hooks in a workspace they have not trusted run in the OS sandbox (real
// bubblewrap): the repository's code they execute — a formatter's config, git's core.fsmonitor —
// writes only in the workspace, reads no key and plants nothing in .git; the hooks' protocol
// (JSON, exit codes, timeouts, abort, the process group) works through it all the same.

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const fixtures = path.join(packageDir, 'src', '__fixtures__');
const isRoot = process.getuid?.() === 0;
const sshKey = '-----BEGIN OPENSSH PRIVATE KEY----- hostile-test-key-material';
const settingsSecret = 'settings-env-deploy-token-value';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A directory under /var/tmp (outside the sandbox's private /tmp), removed after the test. */
function baseDir(): string {
  const base = fs.mkdtempSync('/var/tmp/command-hooks-sandbox-');
  fs.chmodSync(base, 0o755);
  cleanups.push(() => fs.rmSync(base, { recursive: true, force: true }));
  return base;
}

/**
 * This node, hard-linked (or copied) into `base`: the toolchain's may sit under /root, which the
 * sandbox hides when the home is another (as the fixture's is).
 */
function linkNode(base: string): string {
  const node = path.join(base, 'node');
  try {
    fs.linkSync(process.execPath, node);
  } catch {
    fs.copyFileSync(process.execPath, node);
    fs.chmodSync(node, 0o755);
  }
  return node;
}

/** A workspace, a directory outside it, and a home with an SSH key and the agent's settings. */
function fixture(base = baseDir()) {
  const workspace = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  const home = path.join(base, 'home');
  const agentHome = path.join(home, '.agent');
  for (const dir of [workspace, outside, path.join(home, '.ssh'), agentHome])
    fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(home, '.ssh', 'id_ed25519'), sshKey);
  fs.writeFileSync(path.join(home, '.profile'), 'original\n');
  fs.writeFileSync(
    path.join(agentHome, 'settings.json'),
    JSON.stringify({ env: { DEPLOY_TOKEN: settingsSecret } }),
  );
  return { base, workspace, outside, home, agentHome, node: linkNode(base) };
}

function sandboxFor(paths: ReturnType<typeof fixture>): Sandbox {
  const sandbox = createSandbox({
    mode: 'required',
    writableRoots: [paths.workspace],
    secretPaths: [...defaultSecretPaths(paths.home), paths.agentHome],
    network: 'on',
    onWarning: () => undefined,
  });
  cleanups.push(() => void sandbox.close());
  return sandbox;
}

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
  paths: ReturnType<typeof fixture>,
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
      commandHooks: path.join(packageDir, 'dist', 'index.js'),
      sandboxPackage: path.join(packageDir, '..', 'sandbox', 'dist', 'index.js'),
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

const users = isRoot
  ? [
      { label: 'root', uid: undefined },
      { label: 'nobody', uid: 65534 },
    ]
  : [{ label: `uid ${process.getuid?.()}`, uid: undefined }];

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
  plant: (paths: ReturnType<typeof fixture>, git: (...args: string[]) => void) => void;
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
function plantVector(paths: ReturnType<typeof fixture>, vector: (typeof vectors)[number]) {
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

describe('the hooks protocol through the sandbox', () => {
  beforeEach(skipWithout('bwrap'));

  it('JSON decisions and exit 2 block, other exits warn, stdin arrives, the project dir is set', async () => {
    const paths = fixture();
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({
        PreToolUse: [
          {
            matcher: 'deny_me',
            hooks: [
              {
                type: 'command',
                command: `cat > "$AGENT_PROJECT_DIR/event.json"; echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"json says no"}}'`,
              },
            ],
          },
          {
            matcher: 'block_me',
            hooks: [{ type: 'command', command: 'echo "exit two" >&2; exit 2' }],
          },
          { matcher: 'warn_me', hooks: [{ type: 'command', command: 'exit 7' }] },
        ],
      }),
      {
        cwd: paths.workspace,
        sandbox: sandboxFor(paths),
        onWarning: (line) => warnings.push(line),
      },
    );
    const gate = hooks.wrapGate(async () => ({ behavior: 'allow' }));
    const request = (toolName: string) => permissionRequest(toolName, { text: 'x' });
    expect(await gate(request('deny_me'))).toEqual({ behavior: 'deny', reason: 'json says no' });
    const event = JSON.parse(fs.readFileSync(path.join(paths.workspace, 'event.json'), 'utf8'));
    expect(event).toMatchObject({
      hook_event_name: 'PreToolUse',
      tool_name: 'deny_me',
      cwd: paths.workspace,
    });
    expect(await gate(request('block_me'))).toEqual({ behavior: 'deny', reason: 'exit two' });
    expect(await gate(request('warn_me'))).toEqual({ behavior: 'allow' });
    expect(warnings).toEqual([
      'PreToolUse hook "exit 7" exited 7 (in the OS sandbox; "sandbox": false on the hook runs it outside)',
    ]);
  });

  it('the network is on: a hook reaches a server on 127.0.0.1', async () => {
    const paths = fixture();
    const { port, received } = await listen();
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({
        Stop: [
          {
            hooks: [
              {
                type: 'command',
                command: `${JSON.stringify(paths.node)} -e "require('net').connect(${port}, '127.0.0.1', function () { this.end('notified') })"`,
              },
            ],
          },
        ],
      }),
      {
        cwd: paths.workspace,
        sandbox: sandboxFor(paths),
        onWarning: (line) => warnings.push(line),
      },
    );
    await hooks.stop(false);
    expect(await received).toBe('notified');
    expect(warnings).toEqual([]);
  });

  it('a timeout ends the hook and everything it started inside the sandbox', async () => {
    const paths = fixture();
    const tag = `31${process.pid % 1000}${Date.now() % 100000}`;
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({
        SessionStart: [
          {
            hooks: [
              {
                type: 'command',
                command: `(setsid sleep ${tag} &); sleep ${tag} & touch started; sleep ${tag}`,
                timeout: 1,
              },
            ],
          },
        ],
      }),
      {
        cwd: paths.workspace,
        sandbox: sandboxFor(paths),
        onWarning: (line) => warnings.push(line),
      },
    );
    expect(await hooks.sessionStart('startup')).toBe('');
    expect(fs.existsSync(path.join(paths.workspace, 'started'))).toBe(true);
    expect(warnings).toEqual([
      expect.stringMatching(/^SessionStart hook ".*" timed out \(in the OS sandbox; /),
    ]);
    expect(await gone(`sleep ${tag}`)).toEqual([]);
  });

  it('an abort ends a running hook (and its tree); no warning', async () => {
    const paths = fixture();
    const tag = `32${process.pid % 1000}${Date.now() % 100000}`;
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({
        PreToolUse: [
          { hooks: [{ type: 'command', command: `sleep ${tag} & touch started; wait` }] },
        ],
      }),
      {
        cwd: paths.workspace,
        sandbox: sandboxFor(paths),
        onWarning: (line) => warnings.push(line),
      },
    );
    const controller = new AbortController();
    const started = new Promise<void>((resolve) => {
      const watcher = fs.watch(paths.workspace, (_event, name) => {
        if (name === 'started') {
          watcher.close();
          resolve();
        }
      });
      cleanups.push(() => watcher.close());
    });
    const verdict = hooks.run('PreToolUse', { tool_name: 'echo' }, 'echo', controller.signal);
    await started;
    controller.abort();
    expect(await verdict).toEqual({ additionalContext: [], messages: [] });
    expect(warnings).toEqual([]);
    expect(await gone(`sleep ${tag}`)).toEqual([]);
  });

  it('"sandbox": false runs that hook outside; the others stay in', async () => {
    const paths = fixture();
    // `|| exit 1`: a failed redirection is the shell's exit 2, which would block.
    const write = (name: string) =>
      `echo x > ${JSON.stringify(path.join(paths.outside, name))} || exit 1`;
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({
        Stop: [
          {
            hooks: [
              { type: 'command', command: write('from-opted-out'), sandbox: false },
              { type: 'command', command: write('from-sandboxed') },
              { type: 'command', command: write('from-explicit-true'), sandbox: true },
            ],
          },
        ],
      }),
      {
        cwd: paths.workspace,
        sandbox: sandboxFor(paths),
        onWarning: (line) => warnings.push(line),
      },
    );
    await hooks.stop(false);
    expect(fs.readdirSync(paths.outside)).toEqual(['from-opted-out']);
    expect(warnings).toEqual([
      expect.stringMatching(/from-sandboxed.*Read-only file system.*\(in the OS sandbox; /s),
      expect.stringMatching(/from-explicit-true.*Read-only file system.*\(in the OS sandbox; /s),
    ]);
  });
});

describe('where the sandbox cannot run (a real sandbox whose bwrap is missing)', () => {
  it('withholds sandboxed hooks, says so once, and a withheld PreToolUse guard makes its call ask', async () => {
    const paths = fixture();
    const sandbox = createSandbox({
      mode: 'auto',
      writableRoots: [paths.workspace],
      bwrapPath: path.join(paths.base, 'no-such-bwrap'),
      onWarning: () => undefined,
    });
    expect(sandbox.status.active).toBe(false);
    const marker = (name: string) => `touch ${JSON.stringify(path.join(paths.workspace, name))}`;
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({
        PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: marker('guard') }] }],
        SessionStart: [
          { hooks: [{ type: 'command', command: `${marker('context')}; echo from the hook` }] },
        ],
        Stop: [{ hooks: [{ type: 'command', command: marker('notifier'), sandbox: false }] }],
      }),
      { cwd: paths.workspace, sandbox, onWarning: (line) => warnings.push(line) },
    );
    const notice = hooks.sandboxNotice();
    expect(notice).toMatch(
      /^2 hooks will not run \(PreToolUse "touch .*guard"", SessionStart "touch .*context.*"\): /,
    );
    expect(notice).toMatch(
      /: hooks run only in the OS sandbox here, and it cannot run \(bubblewrap is not installed .*\)\. PreToolUse hooks that do not run make the calls they match ask\.$/,
    );
    expect(hooks.sandboxNotice()).toBeUndefined();
    const asked: PermissionRequest[] = [];
    const gate = hooks.wrapGate(async (request) => {
      asked.push(request);
      return { behavior: 'deny', reason: 'no one to ask' };
    });
    const request = permissionRequest('bash', { command: 'ls' });
    expect(await gate(request)).toEqual({ behavior: 'deny', reason: 'no one to ask' });
    expect(asked[0]?.opaque).toMatch(
      /^your PreToolUse hook "touch .*guard"" did not run: hooks run only in the OS sandbox here/,
    );
    // A tool no withheld hook matches is not asked on its account.
    expect(await gate(permissionRequest('read_file', { path: 'a' }))).toEqual({
      behavior: 'deny',
      reason: 'no one to ask',
    });
    expect(asked[1]?.opaque).toBeUndefined();
    expect(await hooks.sessionStart('startup')).toBe('');
    await hooks.stop(false);
    expect(fs.readdirSync(paths.workspace)).toEqual(['notifier']);
    // Said once, by sandboxNotice: not again through onWarning.
    expect(warnings).toEqual([]);
  });

  it('without sandboxNotice, onWarning says it once, on the first withheld hook', async () => {
    const paths = fixture();
    const sandbox = createSandbox({
      mode: 'auto',
      writableRoots: [paths.workspace],
      bwrapPath: path.join(paths.base, 'no-such-bwrap'),
      onWarning: () => undefined,
    });
    const warnings: string[] = [];
    const hooks = new CommandHooks(
      parseHooksConfig({ Stop: [{ hooks: [{ type: 'command', command: 'true' }] }] }),
      { cwd: paths.workspace, sandbox, onWarning: (line) => warnings.push(line) },
    );
    await hooks.stop(false);
    await hooks.stop(false);
    expect(warnings).toEqual([expect.stringMatching(/^1 hook will not run \(Stop "true"\)/)]);
  });
});

describe('"sandbox" in a hook’s configuration', () => {
  it('takes true or false, nothing else, naming where', () => {
    const config = parseHooksConfig({
      Stop: [{ hooks: [{ type: 'command', command: 'notify', sandbox: false }] }],
    });
    expect(config.Stop?.[0]?.hooks[0]?.sandbox).toBe(false);
    expect(() =>
      parseHooksConfig(
        { Stop: [{ hooks: [{ type: 'command', command: 'notify', sandbox: 'no' }] }] },
        'settings.json: hooks',
      ),
    ).toThrow(
      new HooksConfigError('settings.json: hooks.Stop[0].hooks[0].sandbox must be true or false'),
    );
  });
});

/** What the gate is asked for a call of `toolName` (a real tool; an empty assistant message). */
function permissionRequest(toolName: string, args: Record<string, unknown>): PermissionRequest {
  return {
    toolCallId: `call_${toolName}`,
    toolName,
    requestedName: toolName,
    args,
    tool: defineTool({
      name: toolName,
      description: 'A tool.',
      input: z.object({}).passthrough(),
      execute: async () => '',
    }),
    assistantMessage: {
      role: 'assistant',
      content: [],
      provider: 'test',
      model: 'test',
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
      stopReason: 'toolUse',
      timestamp: 0,
    },
    subjects: [],
    tier: 'read-only',
  };
}

/** A TCP server on 127.0.0.1 port 0; `received` is what the first connection sent. */
async function listen(): Promise<{ port: number; received: Promise<string> }> {
  let deliver: (text: string) => void = () => undefined;
  const received = new Promise<string>((resolve) => {
    deliver = resolve;
  });
  const server = net.createServer((socket) => {
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString();
    });
    socket.on('end', () => deliver(text));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => server.close());
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, received };
}

/** Host pids of live processes whose arguments contain `text`. */
function processesWith(text: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'latin1');
        if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return false;
        return fs
          .readFileSync(`/proc/${entry}/cmdline`, 'latin1')
          .replaceAll('\0', ' ')
          .includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The processes still matching after a bounded wait: the kernel ends a pid namespace asynchronously. */
async function gone(text: string, withinMs = 10_000): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  let left = processesWith(text);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    left = processesWith(text);
  }
  return left;
}
