import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { anyUserDirectory, nodeForAnyUser } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { messagesServer } from '../testing/messages-server.js';
import {
  assertBuilt,
  type CliRun,
  cleanEnv,
  cliPath,
  cliPathForAnyUser,
  runCli,
  writeScript,
} from '../testing/test-support.js';
import { handoverVariable } from './credential-handover.js';

// A process of the same user reads another's environ block (/proc/<pid>/environ needs only
// PTRACE_MODE_READ, which Yama leaves alone): with the sandbox off a command read the CLI's API
// key from its parent's. The CLI now re-executes itself without its credentials at start.

beforeAll(assertBuilt);
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const providerKey = `sk-ant-api03-${'hK7_'.repeat(20)}`;
const isRoot = process.getuid?.() === 0;
const users = isRoot
  ? [
      { label: 'root', uid: undefined },
      { label: 'nobody', uid: 65534 },
    ]
  : [{ label: `uid ${process.getuid?.()}`, uid: undefined }];

/** Writes the environ block of the command and of each of its ancestors to its own file (ancestors.sh). */
const ancestorsCommand = [
  'p=$$',
  'while [ "$p" -gt 1 ]; do',
  '  tr "\\0" " " < /proc/$p/cmdline > "ancestors/$p.cmdline"',
  '  cat /proc/$p/environ > "ancestors/$p.environ" 2>/dev/null',
  "  p=$(awk '/^PPid/ { print $2 }' /proc/$p/status)",
  'done',
  'ls -A "$XDG_RUNTIME_DIR" "$TMPDIR" > handover-left.txt',
].join('\n');

interface Place {
  base: string;
  workspace: string;
  runtime: string;
  temporary: string;
  node: string;
}

/** A workspace, an AGENT_HOME, a runtime and a temp folder, and this node, all `uid`'s. */
function place(uid: number | undefined): Place {
  const dir = anyUserDirectory('agent-cli-handover-');
  cleanups.push(() => dir.dispose());
  const base = dir.path;
  const workspace = join(base, 'ws');
  const runtime = join(base, 'runtime');
  const temporary = join(base, 'tmp');
  for (const folder of [join(workspace, 'ancestors'), join(base, 'home'), runtime, temporary])
    fs.mkdirSync(folder, { recursive: true });
  fs.chmodSync(runtime, 0o700);
  // /root (where this node may live) is closed to nobody: a link where it can reach it.
  const node = join(base, 'node');
  nodeForAnyUser(node);
  fs.writeFileSync(join(workspace, 'ancestors.sh'), `${ancestorsCommand}\n`);
  if (uid !== undefined) spawnSync('chown', ['-R', `${uid}:${uid}`, base]);
  return { base, workspace, runtime, temporary, node };
}

/** Runs the built CLI with `node`, as `uid` (setpriv) or as this user. */
async function runAs(
  uid: number | undefined,
  node: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<CliRun> {
  const command = [node, uid === undefined ? cliPath : cliPathForAnyUser(), ...args];
  const child = spawn(
    uid === undefined ? node : 'setpriv',
    uid === undefined
      ? command.slice(1)
      : [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...command],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
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

describe.each(users)('the CLI’s environ block, as $label', ({ uid }) => {
  it('holds no credential: an unsandboxed command reads every ancestor’s and finds no key; the provider still gets it', async () => {
    const at = place(uid);
    const server = await messagesServer(
      [{ tool: { name: 'bash', input: { command: 'sh ancestors.sh' } } }, { text: 'done' }],
      cleanups as (() => Promise<void>)[],
    );
    const run = await runAs(
      uid,
      at.node,
      [
        '-p',
        'go',
        '--provider',
        'anthropic',
        '--cwd',
        at.workspace,
        '--sandbox',
        'off',
        '--mode',
        'full-access',
      ],
      cleanEnv({
        ANTHROPIC_API_KEY: providerKey,
        ANTHROPIC_BASE_URL: server.url,
        // Under a name no rule knows: found by its value.
        PLAIN_SETTING: `sk-proj-${'Zq9x'.repeat(12)}`,
        HANDOVER_MARKER: 'visible',
        HOME: join(at.base, 'home'),
        AGENT_HOME: join(at.base, 'home', '.agent'),
        XDG_RUNTIME_DIR: at.runtime,
        TMPDIR: at.temporary,
      }),
    );
    expect(run.code, run.stderr).toBe(0);
    // The key reached the provider: taken back after the re-execution.
    expect(server.apiKeys.length).toBeGreaterThan(1);
    expect(new Set(server.apiKeys)).toEqual(new Set([providerKey]));
    const folder = join(at.workspace, 'ancestors');
    const pids = fs.readdirSync(folder).filter((name) => name.endsWith('.cmdline'));
    const cli = pids.filter((name) =>
      fs.readFileSync(join(folder, name), 'utf8').includes('main.js'),
    );
    expect(cli).toHaveLength(1);
    const cliEnviron = fs.readFileSync(join(folder, (cli[0] ?? '').replace('cmdline', 'environ')));
    // The read worked: the CLI's other variables are there, and its pid is the command's parent chain.
    expect(cliEnviron.toString()).toContain('HANDOVER_MARKER=visible');
    for (const name of fs.readdirSync(folder).filter((entry) => entry.endsWith('.environ'))) {
      const text = fs.readFileSync(join(folder, name), 'latin1');
      expect(text, name).not.toContain(providerKey);
      expect(text, name).not.toContain('Zq9xZq9x');
      // The path of a file already removed, in the CLI's block alone; never passed on.
      if (name !== (cli[0] ?? '').replace('cmdline', 'environ'))
        expect(text, name).not.toContain(handoverVariable);
    }
    // The file that carried them was gone before any command ran.
    expect(fs.readFileSync(join(at.workspace, 'handover-left.txt'), 'utf8')).not.toMatch(
      /agent-handover-/,
    );
    expect(fs.readdirSync(at.runtime)).toEqual([]);
  });
});

describe('a handed-over file the CLI did not write', () => {
  const text = () =>
    writeScript(fs.mkdtempSync('/tmp/agent-cli-handover-script-'), [{ text: 'done' }]);

  async function startWith(file: string): Promise<CliRun> {
    const script = await text();
    cleanups.push(() => fs.rmSync(join(script, '..'), { recursive: true, force: true }));
    return runCli(['-p', 'go', '--scripted', script], {
      env: cleanEnv({ [handoverVariable]: file }),
    });
  }

  /** A private folder holding credentials.json with `content`, `mode`. */
  function handover(content: string, mode = 0o600, folderMode = 0o700): string {
    const folder = fs.mkdtempSync('/tmp/agent-handover-');
    cleanups.push(() => fs.rmSync(folder, { recursive: true, force: true }));
    const file = join(folder, 'credentials.json');
    fs.writeFileSync(file, content, { mode });
    fs.chmodSync(file, mode);
    fs.chmodSync(folder, folderMode);
    return file;
  }

  it.each([
    ['a relative path', () => 'credentials.json', /are not where the CLI puts them/],
    ['another name', () => '/etc/passwd', /are not where the CLI puts them/],
    [
      'a file others may read',
      () => handover(JSON.stringify({ OPENAI_API_KEY: 'x' }), 0o644),
      /not a private file of this user/,
    ],
    [
      'a folder others may enter',
      () => handover(JSON.stringify({ OPENAI_API_KEY: 'x' }), 0o600, 0o755),
      /folder that is not private to this user/,
    ],
    [
      'a variable that is no credential',
      () => handover(JSON.stringify({ NODE_OPTIONS: '--require /tmp/evil.js' })),
      /hold NODE_OPTIONS, which is not a credential variable/,
    ],
    ['not JSON', () => handover('OPENAI_API_KEY=x'), /are not JSON/],
    ['a missing file', () => '/tmp/agent-handover-missing/credentials.json', /cannot be read/],
  ])('%s: refused, nothing runs', async (_label, make, message) => {
    const run = await startWith(make());
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).not.toContain('done');
  });

  it('a link in place of the file: refused, the file it names left alone', async () => {
    const target = handover(JSON.stringify({ OPENAI_API_KEY: 'sk-linked' }));
    const folder = fs.mkdtempSync('/tmp/agent-handover-');
    cleanups.push(() => fs.rmSync(folder, { recursive: true, force: true }));
    fs.chmodSync(folder, 0o700);
    fs.symlinkSync(target, join(folder, 'credentials.json'));
    const run = await startWith(join(folder, 'credentials.json'));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cannot be read: ELOOP/);
    expect(fs.existsSync(target)).toBe(true);
  });
});
