import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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
  testUsers,
  writeScript,
} from '../testing/test-support.js';
import { handoverVariable, keyedArguments } from './credential-handover.js';

// A process of the same user reads another's environ block (/proc/<pid>/environ needs only
// PTRACE_MODE_READ, which Yama leaves alone): with the sandbox off a command read the CLI's API
// key from its parent's. The CLI now re-executes itself without its credentials at start.

beforeAll(assertBuilt);
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const providerKey = `sk-ant-api03-${'hK7_'.repeat(20)}`;

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

/** `--cwd` the place's workspace, commands unsandboxed and unasked (they read every ancestor). */
function unsandboxedIn(at: Place): string[] {
  return ['--cwd', at.workspace, '--sandbox', 'off', '--mode', 'full-access'];
}

/** The place's home, AGENT_HOME, runtime and temp folders, as variables. */
function homesOf(at: Place): Record<string, string> {
  return {
    HOME: join(at.base, 'home'),
    AGENT_HOME: join(at.base, 'home', '.agent'),
    XDG_RUNTIME_DIR: at.runtime,
    TMPDIR: at.temporary,
  };
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

describe.each(testUsers)('the CLI’s environ block, as $label', ({ uid }) => {
  it('holds no credential: an unsandboxed command reads every ancestor’s and finds no key; the provider still gets it', async () => {
    const at = place(uid);
    const server = await messagesServer(
      [{ tool: { name: 'bash', input: { command: 'sh ancestors.sh' } } }, { text: 'done' }],
      cleanups as (() => Promise<void>)[],
    );
    const run = await runAs(
      uid,
      at.node,
      ['-p', 'go', '--provider', 'anthropic', ...unsandboxedIn(at)],
      cleanEnv({
        ANTHROPIC_API_KEY: providerKey,
        ANTHROPIC_BASE_URL: server.url,
        // Under a name no rule knows: found by its value.
        PLAIN_SETTING: `sk-proj-${'Zq9x'.repeat(12)}`,
        HANDOVER_MARKER: 'visible',
        ...homesOf(at),
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

/** A handover file's text holding `names` and no argument. */
function variables(names: Record<string, string>): string {
  return JSON.stringify({ variables: names, arguments: [] });
}

/** An OpenAI chat-completions stream: a bash call of `command`, then `done`; keeps each request's URL. */
async function chatServer(command: string): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(request.url ?? '');
    request.resume();
    request.on('end', () => {
      const delta =
        requests.length === 1
          ? {
              role: 'assistant',
              tool_calls: [
                {
                  index: 0,
                  id: 'call_1',
                  type: 'function',
                  function: { name: 'bash', arguments: JSON.stringify({ command }) },
                },
              ],
            }
          : { role: 'assistant', content: 'done' };
      const chunks = [
        { choices: [{ index: 0, delta, finish_reason: null }] },
        {
          choices: [
            { index: 0, delta: {}, finish_reason: requests.length === 1 ? 'tool_calls' : 'stop' },
          ],
        },
      ].map((chunk) => ({
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        ...chunk,
      }));
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(
        `${chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('')}data: [DONE]\n\n`,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

// The command line is readable by every user of the machine (`ps`, /proc/<pid>/cmdline), for as
// long as the CLI runs: a key in `--base-url` was there for the whole run (checked as user
// probe reading root's). The re-execution now masks each argument that carries a key.
describe.each(testUsers)('the CLI’s command line, as $label', ({ uid }) => {
  it.each([['--base-url', 'URL'], ['--base-url=URL']])(
    'holds a keyed %s masked; the provider gets the key, the tools never see it',
    async (...form) => {
      const at = place(uid);
      const server = await chatServer('sh ancestors.sh');
      const gatewayKey = 'gw-Pq7Lm3Np5Zz9Xk2Rt8Vb6';
      const baseUrl = `${server.url}/v1?api-version=2024-10-21&key=${gatewayKey}`;
      const run = await runAs(
        uid,
        at.node,
        [
          '-p',
          'go',
          '--model',
          'gateway-model',
          ...form.map((part) => part.replace('URL', baseUrl)),
          ...unsandboxedIn(at),
        ],
        cleanEnv({
          OPENAI_API_KEY: 'placeholder',
          ...homesOf(at),
        }),
      );
      expect(run.code, run.stderr).toBe(0);
      // The provider was asked with the key: put back after the re-execution.
      expect(server.requests).toHaveLength(2);
      for (const url of server.requests) expect(url).toContain(`key=${gatewayKey}`);
      const folder = join(at.workspace, 'ancestors');
      const commandLines = fs
        .readdirSync(folder)
        .filter((name) => name.endsWith('.cmdline'))
        .map((name) => fs.readFileSync(join(folder, name), 'utf8'));
      const cli = commandLines.filter((line) => line.includes('main.js'));
      expect(cli).toHaveLength(1);
      // The read worked: the CLI's command line is there, its key masked.
      expect(cli[0]).toContain('api-version=2024-10-21&key=***');
      expect(cli[0]).toContain('gateway-model');
      for (const line of commandLines) expect(line).not.toContain(gatewayKey);
      expect(run.stdout + run.stderr).not.toContain(gatewayKey);
      // Nothing to warn about: the key is no longer where others read it.
      expect(run.stderr).not.toContain('--base-url holds a key');
      expect(fs.readdirSync(at.runtime)).toEqual([]);
    },
  );
});

describe('keyedArguments', () => {
  it.each([
    ['http://127.0.0.1:9/v1?key=gw-Pq7Lm3Np5Zz9Xk2Rt8Vb6', 'http://127.0.0.1:9/v1?key=***'],
    [
      '--base-url=https://me:hunter2@proxy.example/v1',
      '--base-url=https://me:***@proxy.example/v1',
    ],
    [
      'https://api.example.com/openapi.json?api_key=abc',
      'https://api.example.com/openapi.json?api_key=***',
    ],
    [`sk-ant-api03-${'hK7_'.repeat(20)}`, '***'],
    [`--system=ghp_${'a1B2'.repeat(9)}`, '--system=***'],
  ])('%s is masked as %s', (argument, shown) => {
    expect(keyedArguments(['node', 'main.js', argument])).toEqual([
      { index: 2, shown, value: argument },
    ]);
  });

  it.each([
    ['http://localhost:11434/v1'],
    ['--base-url=https://openrouter.ai/api/v1'],
    ['fix the failing test in src/app.ts'],
    ['--cwd=/home/me/projects/agent'],
    ['gpt-5.1-codex-mini'],
  ])('%s is left as it is', (argument) => {
    expect(keyedArguments(['node', 'main.js', argument])).toEqual([]);
  });

  it('reads neither node nor the script', () => {
    const key = `sk-ant-api03-${'hK7_'.repeat(20)}`;
    expect(keyedArguments([key, key])).toEqual([]);
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
      () => handover(variables({ OPENAI_API_KEY: 'x' }), 0o644),
      /not a private file of this user/,
    ],
    [
      'a folder others may enter',
      () => handover(variables({ OPENAI_API_KEY: 'x' }), 0o600, 0o755),
      /folder that is not private to this user/,
    ],
    [
      'a variable that is no credential',
      () => handover(variables({ NODE_OPTIONS: '--require /tmp/evil.js' })),
      /hold NODE_OPTIONS, which is not a credential variable/,
    ],
    [
      'the old shape (variables alone)',
      () => handover(JSON.stringify({ OPENAI_API_KEY: 'sk-x' })),
      /not an object of variables and arguments/,
    ],
    [
      'an argument that stands in no masked place',
      () =>
        handover(
          JSON.stringify({
            variables: {},
            arguments: [{ index: 2, shown: '-p', value: '--mcp-config=/tmp/evil.json' }],
          }),
        ),
      /an argument that is not a masked key of this command line/,
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
    const target = handover(variables({ OPENAI_API_KEY: 'sk-linked' }));
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
