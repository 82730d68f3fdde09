import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

// The CLI's tools never see the credentials of its environment, and nothing it writes down holds
// one: real CLI processes with a scripted model, keys in fake but real formats.

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const keys = {
  OPENAI_API_KEY: `sk-proj-${'Ab3'.repeat(16)}`,
  ANTHROPIC_API_KEY: `sk-ant-api03-${'xY9_'.repeat(20)}`,
  MY_SECRET: 'hunter2-but-longer',
  GITHUB_TOKEN: 'gh-token-value-1234',
  DATABASE_URL: 'postgres://app:pg-password-value@db:5432/app',
  INNOCENT_LOOKING: `ghp_${'A1b2'.repeat(9)}`,
  // Keys of no known format under names no rule reads: withheld because their values look random.
  MFA_SEED: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
  DEEPGRAM: '9f2c4e6a8b0d1f3a5c7e9b2d4f6a8c0e1b3d5f7a',
  MY_SVC: 'q7Rk2ZpX9vLm4TnW8bYc3HdF6sJg1AeU',
};

/** A workspace and a private AGENT_HOME, both removed after the test. */
async function setup() {
  const dir = await tempDir('agent-cli-credentials-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  const home = join(dir.path, 'home');
  await mkdir(workspace);
  await mkdir(home);
  return {
    dir: dir.path,
    workspace,
    home,
    env: cleanEnv({ ...keys, AGENT_HOME: home, ORDINARY_SETTING: 'kept-value' }),
  };
}

/** Every file under `dir`, concatenated (the session files under $AGENT_HOME/sessions). */
function filesUnder(dir: string): string {
  if (!existsSync(dir)) return '';
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'))
    .join('\n');
}

function expectNoKeyValue(text: string, except: readonly string[] = []) {
  for (const [name, value] of Object.entries(keys))
    if (!except.includes(name)) expect(text).not.toContain(value);
}

describe('tools run without the credentials of the CLI environment', () => {
  it.for([
    ['sandboxed', 'required'],
    ['unsandboxed', 'off'],
  ] as const)(
    'bash (%s): env shows no key; transcript, JSON output and session file hold none',
    async ([_label, sandbox], context) => {
      if (sandbox === 'required') skipWithout('bwrap')(context);
      const { workspace, home, env, dir } = await setup();
      const script = await writeScript(dir, [
        {
          toolCalls: [
            { name: 'bash', arguments: { command: 'env; echo "key=[$OPENAI_API_KEY]"' } },
            {
              name: 'bash',
              arguments: {
                command: 'env > background.tmp && mv background.tmp background-env.txt',
                run_in_background: true,
              },
            },
          ],
        },
        // The next turn waits for the background command's file (the CLI stops it when it exits).
        {
          toolCalls: [
            {
              name: 'bash',
              arguments: { command: 'until [ -e background-env.txt ]; do sleep 0.05; done' },
            },
          ],
        },
        { text: 'done' },
      ]);
      for (const format of ['text', 'json', 'stream-json']) {
        await rm(join(workspace, 'background-env.txt'), { force: true });
        const run = await runCli(
          [
            '-p',
            'show me the environment',
            '--scripted',
            script,
            '--cwd',
            workspace,
            '--mode',
            'full-access',
            '--sandbox',
            sandbox,
            '--output-format',
            format,
          ],
          { env },
        );
        expect(run.code, run.stderr).toBe(0);
        const output = run.stdout + run.stderr;
        expectNoKeyValue(output);
        if (format === 'text') {
          // The start names what the tools do not get (names only), and how to pass one.
          const notice = run.stderr
            .split('\n')
            .find((line) => line.startsWith('credentials withheld'));
          expect(notice).toBeDefined();
          for (const name of Object.keys(keys)) expect(notice).toContain(name);
          expect(notice).not.toContain('ORDINARY_SETTING');
          expect(notice).toContain('--pass-env NAME');
        }
        if (format === 'stream-json') {
          // What the model got back: the environment without the keys, PATH and HOME kept.
          expect(output).toMatch(/PATH=/);
          expect(output).toContain('HOME=');
          expect(output).toContain('ORDINARY_SETTING=kept-value');
          expect(output).toContain('key=[]');
          for (const name of Object.keys(keys)) expect(output).not.toContain(`${name}=`);
        }
      }
      const sessions = filesUnder(join(home, 'sessions'));
      expect(sessions).toContain('ORDINARY_SETTING=kept-value');
      expectNoKeyValue(sessions);
      for (const name of Object.keys(keys)) expect(sessions).not.toContain(`${name}=`);
      const background = await readFile(join(workspace, 'background-env.txt'), 'utf8');
      expect(background).toMatch(/^PATH=/m);
      expect(background).toContain('ORDINARY_SETTING=kept-value');
      for (const name of Object.keys(keys)) expect(background).not.toContain(`${name}=`);
    },
  );

  it('--pass-env and the user settings pass the named variables; other keys stay withheld', async () => {
    const { workspace, home, env, dir } = await setup();
    await writeFile(join(home, 'settings.json'), JSON.stringify({ passEnv: ['GITHUB_TOKEN'] }));
    const script = await writeScript(dir, [
      {
        toolCalls: [
          {
            name: 'bash',
            arguments: {
              command:
                'printf "%s|%s|%s" "$MY_SECRET" "$GITHUB_TOKEN" "$OPENAI_API_KEY" > passed.txt; cat passed.txt',
            },
          },
        ],
      },
      { text: 'done' },
    ]);
    const run = await runCli(
      [
        '-p',
        'go',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--mode',
        'full-access',
        '--pass-env',
        'MY_SECRET',
        '--save',
        join(dir, 'saved.json'),
      ],
      { env },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(await readFile(join(workspace, 'passed.txt'), 'utf8')).toBe(
      `${keys.MY_SECRET}|${keys.GITHUB_TOKEN}|`,
    );
    // The passed values reached the conversation through the tool's output: redacted on save,
    // in the session file and in the transcript.
    const saved = await readFile(join(dir, 'saved.json'), 'utf8');
    expect(saved).toContain('[redacted:MY_SECRET]|[redacted:GITHUB_TOKEN]|');
    expectNoKeyValue(saved + filesUnder(join(home, 'sessions')) + run.stderr + run.stdout);
  });

  it('a key the model writes itself (it read a .env file) is redacted in the answer, the session file and the transcript', async () => {
    const { workspace, home, env, dir } = await setup();
    await writeFile(join(workspace, '.env'), `OPENAI_API_KEY=${keys.OPENAI_API_KEY}\n`);
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'read_file', arguments: { path: '.env' } }] },
      { text: `Your key is ${keys.OPENAI_API_KEY} and the database is ${keys.DATABASE_URL}.` },
    ]);
    for (const format of ['text', 'json']) {
      const run = await runCli(
        [
          '-p',
          'what is in .env?',
          '--scripted',
          script,
          '--cwd',
          workspace,
          '--output-format',
          format,
        ],
        { env },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('[redacted:OPENAI_API_KEY]');
      expect(run.stdout).toContain('[redacted:DATABASE_URL]');
      expectNoKeyValue(run.stdout + run.stderr);
    }
    const sessions = filesUnder(join(home, 'sessions'));
    expect(sessions).toContain('OPENAI_API_KEY=[redacted:OPENAI_API_KEY]');
    expectNoKeyValue(sessions);
  });

  it('stream-json: a key the model writes, split across text deltas, is redacted in the deltas put together', async () => {
    const { workspace, env, dir } = await setup();
    // The scripted model streams its text 16 characters at a time: every key here spans deltas.
    const script = await writeScript(dir, [
      {
        text: `Keys: ${keys.OPENAI_API_KEY} and ${keys.ANTHROPIC_API_KEY}, then ${keys.DATABASE_URL}.`,
      },
    ]);
    const run = await runCli(
      [
        '-p',
        'say the keys',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--output-format',
        'stream-json',
      ],
      { env },
    );
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { type: string; text?: string });
    const deltas = lines.filter((line) => line.type === 'text-delta');
    expect(deltas.length).toBeGreaterThan(3);
    const streamed = deltas.map((line) => line.text).join('');
    expectNoKeyValue(streamed);
    expect(streamed).toBe(
      'Keys: [redacted:OPENAI_API_KEY] and [redacted:ANTHROPIC_API_KEY], then [redacted:DATABASE_URL].',
    );
  });

  it('js_repl: process.env holds no key', async () => {
    const { workspace, env, dir } = await setup();
    const saved = join(dir, 'saved.json');
    const script = await writeScript(dir, [
      {
        toolCalls: [
          {
            name: 'js_repl',
            arguments: {
              code: '[process.env.ANTHROPIC_API_KEY ?? "absent", process.env.OPENAI_API_KEY ?? "absent", process.env.ORDINARY_SETTING].join("|")',
            },
          },
        ],
      },
      { text: 'done' },
    ]);
    const run = await runCli(
      [
        '-p',
        'go',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--mode',
        'full-access',
        '--save',
        saved,
      ],
      { env },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(await readFile(saved, 'utf8')).toContain("=> 'absent|absent|kept-value'");
  });

  it("command hooks get no key; an MCP server gets none but its config's own env", async () => {
    const { workspace, home, env, dir } = await setup();
    await writeFile(
      join(home, 'settings.json'),
      JSON.stringify({
        hooks: {
          SessionStart: [
            { hooks: [{ type: 'command', command: 'env > "$AGENT_PROJECT_DIR/hook-env.txt"' }] },
          ],
        },
      }),
    );
    const mcpConfig = join(dir, 'mcp.json');
    await writeFile(
      mcpConfig,
      JSON.stringify({
        mcpServers: {
          envserver: {
            command: process.execPath,
            args: [join(appDir, 'src/__fixtures__/env-server.mjs')],
            env: { SERVER_API_KEY: 'given-to-this-server' },
          },
        },
      }),
    );
    const saved = join(dir, 'saved.json');
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'envserver__names', arguments: {} }] },
      { text: 'done' },
    ]);
    const run = await runCli(
      [
        '-p',
        'go',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--mcp-config',
        mcpConfig,
        // A server's readOnlyHint does not let its tools run unasked.
        '--allow',
        'envserver__names',
        '--save',
        saved,
      ],
      { env },
    );
    expect(run.code, run.stderr).toBe(0);
    const hook = await readFile(join(workspace, 'hook-env.txt'), 'utf8');
    expect(hook).toContain('ORDINARY_SETTING=kept-value');
    for (const name of Object.keys(keys)) expect(hook).not.toContain(`${name}=`);
    const names = (
      JSON.parse(await readFile(saved, 'utf8')) as {
        messages: { role: string; content: { text?: string }[] }[];
      }
    ).messages
      .filter((message) => message.role === 'toolResult')
      .flatMap((message) => message.content.map((part) => part.text ?? ''))
      .join(' ')
      .split(' ');
    expect(names).toContain('PATH');
    expect(names).toContain('SERVER_API_KEY');
    for (const name of Object.keys(keys)) expect(names).not.toContain(name);
  });

  it('passEnv in a project settings file is ignored, named in a notice; the key stays out', async () => {
    const { workspace, env, dir } = await setup();
    await mkdir(join(workspace, '.agent'));
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({ passEnv: ['OPENAI_API_KEY'] }),
    );
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'env' } }] },
      { text: 'done' },
    ]);
    const saved = join(dir, 'saved.json');
    const run = await runCli(
      [
        '-p',
        'go',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--trust',
        '--allow',
        'bash',
        '--save',
        saved,
      ],
      { env },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      `ignored "passEnv" in ${join(workspace, '.agent', 'settings.json')}: only your settings`,
    );
    const output = await readFile(saved, 'utf8');
    expect(output).toContain('ORDINARY_SETTING=kept-value');
    expect(output).not.toContain('OPENAI_API_KEY=');
  });

  it('a passEnv that is not a list of names is an error naming the file', async () => {
    const { workspace, home, env, dir } = await setup();
    await writeFile(join(home, 'settings.json'), JSON.stringify({ passEnv: 'GITHUB_TOKEN' }));
    const script = await writeScript(dir, [{ text: 'done' }]);
    const run = await runCli(['-p', 'go', '--scripted', script, '--cwd', workspace], { env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `${join(home, 'settings.json')}: "passEnv" must be a list of strings`,
    );
  });

  it('--pass-env takes a name, not an assignment', async () => {
    const run = await runCli(['-p', 'go', '--pass-env', 'TOKEN=abcdefg']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--pass-env takes a variable's name");
    expect(run.stderr).toContain('--pass-env TOKEN (its value comes from the environment)');
    // The value typed by mistake is not echoed.
    expect(run.stderr).not.toContain('abcdefg');
  });
});

const ids = {
  AZURE_TENANT_ID: '72f988bf-86f1-41af-91ab-2d7cd011db47',
  BUILDKITE_BUILD_ID: '4735ba57-80d0-46e2-8fa0-b28223a86586',
  INVOCATION_ID: '8a2c5f0b9e7d4c3a1b6f0e9d8c7b6a51',
  GITHUB_SHA: 'ffac537e6cbbf934b08745a378932722df287a53',
};
const keysInPieces = {
  DEPLOY_TARGET: 'deploy:q7Rk2ZpX9vLm4TnW8bYc3HdF',
  DB_OPTIONS: 'host=db.internal,port=5432,key=Tq3Vx8Nw1Ry6Bz4Kc9Dm2Fp7',
  PAYLOAD_B64: '/9Zq+Lm3Np5Zz9Xk2Rt8Vb6Wc1Yd4Fg7',
};

// The random-value rule withheld and redacted ids that are no secret: a tenant id a command
// printed reached the model as `[redacted:AZURE_TENANT_ID]`, and `az` had no tenant. And it read
// only single tokens: a key inside `user:key` or `a=b,key=…` reached the tools.
describe('ids and keys in pieces (the random-value rule)', () => {
  it('an id under a name that says so reaches the tools and the model as it is; a key inside a list does neither', async () => {
    const { workspace, home, dir } = await setup();
    const names = [...Object.keys(ids), ...Object.keys(keysInPieces)];
    const script = await writeScript(dir, [
      {
        toolCalls: [
          {
            name: 'bash',
            arguments: {
              // What the tool's environment holds, and the values as a command prints them.
              command: `for n in ${names.join(' ')}; do printenv "$n" >/dev/null && echo "has $n"; done; echo "${[...Object.values(ids), ...Object.values(keysInPieces)].join(' ')}"`,
            },
          },
        ],
      },
      { text: 'done' },
    ]);
    const run = await runCli(
      [
        '-p',
        'go',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--mode',
        'full-access',
        '--sandbox',
        'off',
        '--output-format',
        'stream-json',
      ],
      { env: cleanEnv({ ...ids, ...keysInPieces, AGENT_HOME: home }) },
    );
    expect(run.code, run.stderr).toBe(0);
    for (const [name, value] of Object.entries(ids)) {
      expect(run.stdout).toContain(`has ${name}`);
      expect(run.stdout).toContain(value);
      expect(run.stdout).not.toContain(`[redacted:${name}]`);
    }
    for (const [name, value] of Object.entries(keysInPieces)) {
      expect(run.stdout).not.toContain(`has ${name}`);
      expect(run.stdout).not.toContain(value);
      expect(run.stdout).toContain(`[redacted:${name}]`);
    }
    const text = filesUnder(join(home, 'sessions'));
    expect(text).toContain(ids.AZURE_TENANT_ID);
    for (const value of Object.values(keysInPieces)) expect(text).not.toContain(value);
  });
});
