import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
import { nodeForAnyUser, skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { streamJsonEventSchema } from '../modes/stream-json.js';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  cliPath,
  cliPathForAnyUser,
  runCli,
  screenWaitOptions,
  TmuxSession,
  writeScript,
} from '../testing/test-support.js';

// The user's own hooks in a folder they have not trusted run in the OS sandbox: a cloned
// repository whose formatter config and .git/config run code gets nothing outside the workspace,
// no key, no planted git config. Real CLI processes (as root and as nobody), real bubblewrap, a
// scripted model; the same repository in a trusted folder is the control.

beforeAll(assertBuilt);
const isRoot = process.getuid?.() === 0;
const sshKey = '-----BEGIN OPENSSH PRIVATE KEY----- cli-hostile-test-key';
const settingsSecret = 'settings-env-value-of-a-deploy-token';
const fixtures = join(appDir, '..', '..', 'packages', 'command-hooks', 'src', '__fixtures__');

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

interface Repository {
  base: string;
  workspace: string;
  outside: string;
  home: string;
  agentHome: string;
  /** This node, linked where the sandbox shows it ($AGENT_HOME/hooks): /root may be hidden. */
  node: string;
}

/**
 * A hostile repository (a git repository whose core.fsmonitor and prettier.config.mjs run the
 * payload), a home with an SSH key, and the user's settings with innocent hooks: a formatter after
 * edits, `git status` at start, and one that prints the key, the settings and its environment.
 */
function hostileRepository(
  options: { hookExtras?: Record<string, unknown>; settings?: Record<string, unknown> } = {},
): Repository {
  // Not under /tmp, which the sandbox replaces with a private one: the home is where a home is.
  const base = fs.mkdtempSync('/var/tmp/agent-cli-hook-sandbox-');
  fs.chmodSync(base, 0o755);
  cleanups.push(() => fs.rmSync(base, { recursive: true, force: true }));
  const workspace = join(base, 'ws');
  const outside = join(base, 'outside');
  const home = join(base, 'home');
  const agentHome = join(home, '.agent');
  const hooksDir = join(agentHome, 'hooks');
  for (const dir of [workspace, outside, join(home, '.ssh'), hooksDir])
    fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(join(home, '.ssh', 'id_ed25519'), sshKey);
  fs.writeFileSync(join(home, '.profile'), 'original\n');
  const node = join(hooksDir, 'node');
  nodeForAnyUser(node);
  fs.copyFileSync(join(fixtures, 'fake-prettier.mjs'), join(hooksDir, 'fake-prettier.mjs'));
  fs.copyFileSync(join(fixtures, 'hostile-payload.mjs'), join(workspace, 'payload.mjs'));
  fs.writeFileSync(
    join(workspace, 'prettier.config.mjs'),
    `import { execFileSync } from 'node:child_process';\nexecFileSync(process.execPath, ['payload.mjs', 'prettier']);\nexport default {};\n`,
  );
  const git = (...args: string[]) =>
    expect(spawnSync('git', args, { cwd: workspace }).status).toBe(0);
  git('init', '-q');
  git(
    'config',
    'core.fsmonitor',
    `${JSON.stringify(node)} ${JSON.stringify(join(workspace, 'payload.mjs'))} fsmonitor; true`,
  );
  fs.writeFileSync(
    join(agentHome, 'settings.json'),
    JSON.stringify({
      env: { DEPLOY_TOKEN: settingsSecret },
      hooks: {
        PostToolUse: [
          {
            matcher: 'write_file',
            hooks: [
              {
                type: 'command',
                command: `"${node}" "${hooksDir}/fake-prettier.mjs" --write src.js`,
                ...options.hookExtras,
              },
            ],
          },
        ],
        SessionStart: [{ hooks: [{ type: 'command', command: 'git status --porcelain' }] }],
        UserPromptSubmit: [
          {
            hooks: [
              {
                type: 'command',
                command: `cat "$HOME/.ssh/id_ed25519" "${agentHome}/settings.json"; env`,
              },
            ],
          },
        ],
      },
      ...options.settings,
    }),
  );
  return { base, workspace, outside, home, agentHome, node };
}

/** The scripted model writes src.js (the formatter runs after it), then answers. */
function script(repository: Repository): Promise<string> {
  return writeScript(repository.base, [
    {
      toolCalls: [
        { name: 'write_file', arguments: { path: 'src.js', content: '   const answer = 42;   ' } },
      ],
    },
    { text: 'done' },
  ]);
}

/** Runs the built CLI (with the linked node) as `uid`, or as this user. */
/** `agent -p go --mode workspace-write` with the repository's script, and `flags`. */
async function runScripted(repository: Repository, ...flags: string[]) {
  return runCliAs(repository, [
    '-p',
    'go',
    '--mode',
    'workspace-write',
    '--scripted',
    await script(repository),
    ...flags,
  ]);
}

async function runCliAs(
  repository: Repository,
  args: readonly string[],
  uid?: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  if (uid !== undefined) spawnSync('chown', ['-R', `${uid}:${uid}`, repository.base]);
  const command = [repository.node, uid === undefined ? cliPath : cliPathForAnyUser(), ...args];
  const child = spawn(
    uid === undefined ? repository.node : 'setpriv',
    uid === undefined
      ? command.slice(1)
      : [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...command],
    {
      cwd: repository.workspace,
      env: cleanEnv({
        HOME: repository.home,
        AGENT_HOME: repository.agentHome,
        HOSTILE_WORKSPACE: repository.workspace,
        HOSTILE_OUTSIDE: repository.outside,
        HOSTILE_AGENT_HOME: repository.agentHome,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
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

function report(repository: Repository, label: string): PayloadReport {
  return JSON.parse(fs.readFileSync(join(repository.workspace, `report-${label}.json`), 'utf8'));
}

const users = isRoot
  ? [
      { label: 'root', uid: undefined },
      { label: 'nobody', uid: 65534 },
    ]
  : [{ label: `uid ${process.getuid?.()}`, uid: undefined }];

describe.each(users)('an untrusted hostile repository, the user’s hooks, as $label', ({ uid }) => {
  beforeEach(skipWithout('bwrap'));

  it('the formatter and git status work; the repository’s code they run reaches nothing outside', async () => {
    const repository = hostileRepository();
    const gitConfig = fs.readFileSync(join(repository.workspace, '.git', 'config'), 'utf8');
    const saved = join(repository.base, 'saved.json');
    const run = await runCliAs(
      repository,
      [
        '-p',
        'go',
        '--mode',
        'workspace-write',
        '--scripted',
        await script(repository),
        '--save',
        saved,
      ],
      uid,
    );
    expect(run.code, run.stderr).toBe(0);
    // Then what bounds processes and memory, which depends on the user and the machine.
    expect(run.stderr).toMatch(
      new RegExp(
        `hooks: sandboxed \\(bubblewrap\\): writes only in ${escapeRegExp(repository.workspace)} and a private /tmp; no network; no Unix sockets; [^\n]*processes[^\n]* \\(this folder is not trusted\\)\n`,
      ),
    );
    // The hooks did their work.
    expect(fs.readFileSync(join(repository.workspace, 'src.js'), 'utf8')).toBe(
      'const answer = 42;\n',
    );
    expect(run.stderr).not.toMatch(/^hook: /m);
    for (const label of ['prettier', 'fsmonitor']) {
      const found = report(repository, label);
      expect(found.uid, label).toBe(uid ?? process.getuid?.());
      expect(found.outsideWrite.ok, label).toBe(false);
      expect(found.profileAppend.ok, label).toBe(false);
      expect(found.sshKey.value ?? '', label).not.toContain('cli-hostile-test-key');
      expect(found.settings.value ?? '', label).not.toContain(settingsSecret);
      expect(found.gitConfig.ok, label).toBe(false);
      expect(found.gitHook.ok, label).toBe(false);
    }
    expect(fs.readdirSync(repository.outside)).toEqual([]);
    expect(fs.readFileSync(join(repository.home, '.profile'), 'utf8')).toBe('original\n');
    expect(fs.readFileSync(join(repository.workspace, '.git', 'config'), 'utf8')).toBe(gitConfig);
    // The prompt hook's output reached the model: its environment, but no key and no settings.
    const conversation = fs.readFileSync(saved, 'utf8');
    expect(conversation).toContain('HOSTILE_WORKSPACE=');
    expect(conversation).not.toContain('cli-hostile-test-key');
    expect(conversation).not.toContain(settingsSecret);
  });
});

describe('the controls: the same repository where hooks run outside the sandbox', () => {
  it.for([
    ['trusted for the run (--trust)', ['--trust'], {}],
    ['trusted (agent trust)', [], {}],
    ['"hooksSandbox": "off" in the user settings', [], { settings: { hooksSandbox: 'off' } }],
  ] as const)(
    '%s: the formatter’s config writes outside and reads the key',
    async ([_label, flags, options]) => {
      const repository = hostileRepository(options);
      if (_label.includes('agent trust')) {
        const trusted = await runCliAs(repository, ['trust']);
        expect(trusted.code, trusted.stderr).toBe(0);
      }
      const run = await runScripted(repository, ...flags);
      expect(run.code, run.stderr).toBe(0);
      const found = report(repository, 'prettier');
      expect(found.outsideWrite.ok).toBe(true);
      expect(found.sshKey.value).toContain('cli-hostile-test-key');
      expect(fs.readdirSync(repository.outside)).toContain('pwned-prettier');
    },
  );

  it('"sandbox": false on the formatter hook: it runs outside, but in the home, so the config it finds in its working directory is not the folder\'s', async () => {
    const repository = hostileRepository({ hookExtras: { sandbox: false } });
    const run = await runScripted(repository);
    expect(run.code, run.stderr).toBe(0);
    // It ran (outside: the sandbox has no such folder) and failed for want of src.js in the home.
    expect(run.stderr).toContain('fake-prettier.mjs');
    expect(fs.readdirSync(repository.outside)).not.toContain('pwned-prettier');
    expect(fs.existsSync(join(repository.workspace, 'report-prettier.json'))).toBe(false);
  });

  it('"hooksSandbox": "always" sandboxes the hooks of a trusted folder too', async (context) => {
    skipWithout('bwrap')(context);
    const repository = hostileRepository({ settings: { hooksSandbox: 'always' } });
    const run = await runScripted(repository, '--trust');
    expect(run.code, run.stderr).toBe(0);
    expect(report(repository, 'prettier').outsideWrite.ok).toBe(false);
    expect(report(repository, 'fsmonitor').outsideWrite.ok).toBe(false);
    expect(fs.readdirSync(repository.outside)).toEqual([]);
  });
});

describe('a project cannot take hooks out of the sandbox', () => {
  it.for([
    [
      '"sandbox": false on its hook',
      { hooks: { Stop: [{ hooks: [{ type: 'command', command: 'true', sandbox: false }] }] } },
      /ignored "hooks\.Stop\[0\]\.hooks\[0\]\.sandbox" in .*\.agent\/settings\.json: only your settings/,
    ],
    [
      '"hooksSandbox"',
      { hooksSandbox: 'off' },
      /ignored "hooksSandbox" in .*\.agent\/settings\.json: only your settings/,
    ],
    [
      '"hooksSandboxNetwork"',
      { hooksSandboxNetwork: 'on' },
      /ignored "hooksSandboxNetwork" in .*\.agent\/settings\.json: only your settings/,
    ],
  ] as const)(
    'a project file with %s has it ignored, named in a notice; the user’s hooks stay sandboxed',
    async ([_label, project, message], context) => {
      skipWithout('bwrap')(context);
      const repository = hostileRepository();
      fs.mkdirSync(join(repository.workspace, '.agent'));
      fs.writeFileSync(
        join(repository.workspace, '.agent', 'settings.json'),
        JSON.stringify(project),
      );
      const run = await runCliAs(repository, [
        '-p',
        'go',
        '--mode',
        'workspace-write',
        '--scripted',
        await script(repository),
      ]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(message);
      expect(report(repository, 'prettier').outsideWrite.ok).toBe(false);
      expect(fs.readdirSync(repository.outside)).toEqual([]);
    },
  );

  it('a wrong "hooksSandbox" value in the user settings is an error naming it', async () => {
    const repository = hostileRepository({ settings: { hooksSandbox: 'sometimes' } });
    const run = await runCliAs(repository, ['-p', 'go', '--scripted', await script(repository)]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      '"hooksSandbox" must be one of untrusted-folders, always, off, got "sometimes"',
    );
  });
});

describe('where the sandbox cannot run (no bwrap on PATH)', () => {
  it('says so once, runs no sandboxed hook, asks for the calls a withheld guard matches; opted-out hooks run', async () => {
    const repository = hostileRepository();
    // A PATH with the few programs the hooks and the CLI use here, and no bwrap.
    const bin = join(repository.base, 'bin');
    fs.mkdirSync(bin);
    for (const program of ['sh', 'bash', 'git', 'touch', 'cat', 'env']) {
      const found = spawnSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' });
      fs.symlinkSync(found.stdout.trim(), join(bin, program));
    }
    const settings = JSON.parse(
      fs.readFileSync(join(repository.agentHome, 'settings.json'), 'utf8'),
    );
    settings.hooks.PreToolUse = [
      { matcher: 'bash', hooks: [{ type: 'command', command: 'touch guard-ran' }] },
    ];
    settings.hooks.Stop = [
      { hooks: [{ type: 'command', command: 'touch notifier-ran', sandbox: false }] },
    ];
    fs.writeFileSync(join(repository.agentHome, 'settings.json'), JSON.stringify(settings));
    const steps = join(repository.base, 'bash-script.json');
    fs.writeFileSync(
      steps,
      JSON.stringify({
        steps: [
          { toolCalls: [{ name: 'bash', arguments: { command: 'touch bash-ran' } }] },
          { text: 'done' },
        ],
      }),
    );
    const child = spawn(
      repository.node,
      [cliPath, '-p', 'go', '--mode', 'workspace-write', '--scripted', steps],
      {
        cwd: repository.workspace,
        env: cleanEnv({ HOME: repository.home, AGENT_HOME: repository.agentHome, PATH: bin }),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const [code] = (await once(child, 'close')) as [number | null];
    // Said once, at start, naming every withheld hook and the ways out.
    const notices = stderr.split('\n').filter((line) => line.includes('will not run'));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(
      /^hooks: 4 hooks will not run \(PreToolUse "touch guard-ran", PostToolUse ".*fake-prettier.mjs.*", UserPromptSubmit ".*", SessionStart "git status --porcelain"\): hooks run only in the OS sandbox here, and it cannot run \(bubblewrap is not installed.*\)\. .*To run them: trust this folder \(agent trust\), or mark a hook "sandbox": false or set "hooksSandbox": "off" in .*settings\.json\.$/,
    );
    // The withheld guard made the bash call ask; -p could not ask, so it was denied.
    expect(code).toBe(4);
    expect(stderr).toMatch(/bash \[denied\].*your PreToolUse hook "touch guard-ran" did not run/);
    expect(fs.existsSync(join(repository.workspace, 'bash-ran'))).toBe(false);
    expect(fs.existsSync(join(repository.workspace, 'guard-ran'))).toBe(false);
    // No repository code ran (git status was withheld with its hook); the opted-out hook ran, in
    // the home (the folder is not trusted).
    expect(fs.existsSync(join(repository.workspace, 'report-fsmonitor.json'))).toBe(false);
    expect(fs.existsSync(join(repository.home, 'notifier-ran'))).toBe(true);
  });
});

describe('started in a subfolder of an untrusted repository under /tmp', () => {
  beforeEach(skipWithout('bwrap'));

  it('the hooks run in the repository root (readable), write in the workspace, and git works', async () => {
    const base = fs.mkdtempSync('/tmp/agent-cli-hook-subfolder-');
    cleanups.push(() => fs.rmSync(base, { recursive: true, force: true }));
    const repo = join(base, 'repo');
    const workspace = join(repo, 'sub');
    const agentHome = join(base, 'agent-home');
    fs.mkdirSync(workspace, { recursive: true });
    fs.mkdirSync(agentHome);
    fs.writeFileSync(join(repo, 'root-file.txt'), 'x');
    expect(spawnSync('git', ['init', '-q'], { cwd: repo }).status).toBe(0);
    fs.writeFileSync(
      join(agentHome, 'settings.json'),
      JSON.stringify({
        hooks: {
          SessionStart: [
            {
              hooks: [
                {
                  type: 'command',
                  command:
                    'pwd > sub/where.txt; git status --porcelain >> sub/where.txt; touch root-write || echo refused >> sub/where.txt',
                },
              ],
            },
          ],
        },
      }),
    );
    const script = await writeScript(base, [{ text: 'done' }]);
    const run = await runCli(['-p', 'go', '--scripted', script, '--cwd', workspace], {
      env: cleanEnv({ AGENT_HOME: agentHome }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(fs.readFileSync(join(workspace, 'where.txt'), 'utf8').split('\n')).toEqual([
      repo,
      '?? root-file.txt',
      '?? sub/',
      'refused',
      '',
    ]);
    expect(fs.existsSync(join(repo, 'root-write'))).toBe(false);
  });
});

describe('the hooks’ network in a folder not trusted', () => {
  beforeEach(skipWithout('bwrap'));

  /** A Stop hook that connects to a server on 127.0.0.1; the run's stderr and the connections. */
  async function connectingHook(network: 'on' | 'off' | undefined) {
    const repository = hostileRepository();
    let connections = 0;
    const server = net.createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(() => server.close());
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const settingsFile = join(repository.agentHome, 'settings.json');
    const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
    if (network !== undefined) settings.hooksSandboxNetwork = network;
    settings.hooks.Stop = [
      {
        hooks: [
          {
            type: 'command',
            command: `"${repository.node}" -e "require('net').connect(${address.port}, '127.0.0.1').on('connect', () => require('fs').writeFileSync('connected', '')).on('error', (e) => { console.error(e.code); process.exit(1) })"`,
          },
        ],
      },
    ];
    fs.writeFileSync(settingsFile, JSON.stringify(settings));
    const run = await runScripted(repository);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('hooks: sandboxed (bubblewrap): ');
    return {
      stderr: run.stderr,
      connections,
      connected: fs.existsSync(join(repository.workspace, 'connected')),
    };
  }

  it.for([
    ['by default', undefined],
    ['with "hooksSandboxNetwork": "off"', 'off'],
  ] as const)('%s there is none: a server on 127.0.0.1 is not reached', async ([, network]) => {
    const { stderr, connections, connected } = await connectingHook(network);
    expect(stderr).toMatch(/^hooks: .*; no network; /m);
    expect(stderr).toMatch(
      /hook: Stop hook .* exited 1: ECONNREFUSED \(in the OS sandbox; it has no network; "sandbox": false on the hook runs it outside, "hooksSandboxNetwork": "on" in .*settings\.json gives the sandbox one\)/,
    );
    expect(connected).toBe(false);
    expect(connections).toBe(0);
  });

  it('"hooksSandboxNetwork": "on" in the user settings gives it the network', async () => {
    const { stderr, connections, connected } = await connectingHook('on');
    expect(stderr).toMatch(/^hooks: .*; network on; /m);
    expect(stderr).not.toMatch(/^hook: /m);
    expect(connected).toBe(true);
    expect(connections).toBe(1);
  });
});

describe('stream-json says where the hooks run', () => {
  beforeEach(skipWithout('bwrap'));

  it.for([
    ['an untrusted folder', [], true],
    ['a trusted one', ['--trust'], false],
  ] as const)('run-start in %s', async ([_label, flags, sandboxed]) => {
    const repository = hostileRepository();
    const run = await runCliAs(repository, [
      '-p',
      'go',
      '--output-format',
      'stream-json',
      '--scripted',
      await writeScript(repository.base, [{ text: 'done' }], 'text-only.json'),
      ...flags,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const start = streamJsonEventSchema.parse(JSON.parse(run.stdout.split('\n')[0] ?? ''));
    if (start.type !== 'run-start') throw new Error(`first event: ${start.type}`);
    if (sandboxed)
      expect(start.hooksSandbox).toMatch(
        new RegExp(
          `^sandboxed \\(bubblewrap\\): writes only in ${escapeRegExp(repository.workspace)} and a private /tmp; no network; no Unix sockets; .*processes.* \\(this folder is not trusted\\)$`,
        ),
      );
    else expect(start.hooksSandbox).toBeUndefined();
  });
});

describe('the REPL (tmux): the trust answer decides where your hooks run', () => {
  beforeEach(skipWithout('bwrap', 'tmux'));

  it('"n": your SessionStart git status runs sandboxed (said in the banner); "y": as before', async () => {
    const repository = hostileRepository();
    // A project setting that widens, so the REPL asks.
    fs.mkdirSync(join(repository.workspace, '.agent'));
    fs.writeFileSync(
      join(repository.workspace, '.agent', 'settings.json'),
      JSON.stringify({ env: { PROJECT_FLAVOUR: 'hostile' } }),
    );
    const steps = await writeScript(repository.base, [{ text: 'hello' }], 'repl.json');
    const env = cleanEnv({
      HOME: repository.home,
      AGENT_HOME: repository.agentHome,
      HOSTILE_WORKSPACE: repository.workspace,
      HOSTILE_OUTSIDE: repository.outside,
      HOSTILE_AGENT_HOME: repository.agentHome,
    });
    const start = () => {
      const tmux = TmuxSession.start([repository.node, cliPath, '--scripted', steps], {
        cwd: repository.workspace,
        env,
      });
      cleanups.push(() => tmux.kill());
      return tmux;
    };
    const waitFor = (check: () => void) => vi.waitFor(check, screenWaitOptions);
    const prompt = (tmux: TmuxSession) => () =>
      expect(tmux.capture().trimEnd().endsWith('>')).toBe(true);

    const first = start();
    await waitFor(() => expect(first.capture()).toContain('Trust this folder? [y] yes'));
    first.press('n');
    await waitFor(prompt(first));
    expect(first.capture()).toMatch(
      /hooks: sandboxed \(bubblewrap\): .*no network.*\(this folder is not trusted\)/,
    );
    expect(report(repository, 'fsmonitor').outsideWrite.ok).toBe(false);
    expect(fs.readdirSync(repository.outside)).toEqual([]);
    first.kill();

    const second = start();
    await waitFor(() => expect(second.capture()).toContain('Trust this folder? [y] yes'));
    second.press('y');
    await waitFor(prompt(second));
    expect(second.capture()).not.toContain('hooks: sandboxed');
    expect(fs.readdirSync(repository.outside)).toEqual(['pwned-fsmonitor']);
    expect(report(repository, 'fsmonitor').outsideWrite.ok).toBe(true);
    second.kill();
  });
});

/** `text` matched literally inside a regular expression. */
function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
