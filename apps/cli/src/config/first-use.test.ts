// A new user's first mistakes, through the built CLI as a real process: a typo in a command or an
// option, a provider chosen without its key, a key the provider refuses (a real HTTP server on
// 127.0.0.1 answering as each vendor does), a settings file an editor wrote, a folder with no
// session to continue, a home the user cannot write (as nobody, and read-only through bubblewrap),
// stdin left open. Each must say what to do next, exit non-zero and print no stack.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { nodeForAnyUser, skipWithout } from '@agent/tooling-system-tools';
import fc from 'fast-check';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  type CliRun,
  cleanEnv,
  cliPath,
  cliPathForAnyUser,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';
import { closestWord, editDistance } from './suggest.js';

const cleanups: (() => Promise<void>)[] = [];
async function scratch(): Promise<string> {
  const dir = await tempDir('agent-first-use-');
  cleanups.push(dir.dispose);
  return dir.path;
}

beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A user error: a sentence on stderr, no stack, not exit 0. */
function expectUserError(run: CliRun, code: number): void {
  expect(run.code).toBe(code);
  expect(run.stderr).toMatch(/^agent: /);
  expect(run.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  expect(run.stderr).not.toContain('unexpected error');
}

describe('a typo', () => {
  it.each([
    ['dmeo', 'demo'],
    ['deom', 'demo'],
    ['demos', 'demo'],
    ['trsut', 'trust'],
    ['turst', 'trust'],
    ['mpc', 'mcp serve'],
    ['hepl', 'help'],
  ])('agent %s is not sent to a model: did you mean agent %s?', async (typed, meant) => {
    const run = await runCli([typed]);
    expectUserError(run, 2);
    expect(run.stderr).toContain(`Unknown command "${typed}": did you mean agent ${meant}?`);
    expect(run.stderr).toContain(`agent -- ${typed}`);
  });

  it('a word that is no command stays a prompt, and -- makes a near one a prompt', async () => {
    for (const args of [['hello'], ['fix'], ['--', 'dmeo']]) {
      const run = await runCli(args);
      // Not a terminal here: the prompt would start a session, so the CLI says to use -p.
      expectUserError(run, 2);
      expect(run.stderr).toContain('A prompt without -p starts an interactive session');
    }
  });

  it.each([
    ['--modle', '--model'],
    ['--scriptd', '--scripted'],
    ['--cotninue', '--continue'],
    ['--allwo', '--allow'],
    ['--mcp-confg', '--mcp-config'],
    ['--outputformat', '--output-format'],
    ['--providr=openai', '--provider'],
  ])('the option %s: did you mean %s?', async (typed, meant) => {
    const run = await runCli([typed, 'x', '-p', 'hi']);
    expectUserError(run, 2);
    expect(run.stderr).toContain(`did you mean ${meant}?`);
    expect(run.stderr).not.toContain('=openai');
  });

  it.each([
    [
      ['--dangerously-skip-permissions'],
      'Unknown option --dangerously-skip-permissions: here it is --mode full-access',
    ],
    [['--yolo'], 'here it is --mode full-access --sandbox off'],
    [['--full-auto'], 'here it is --mode workspace-write'],
    [['--allowedTools', 'Bash'], 'here it is --allow <rule>'],
    [['--permission-mode', 'plan'], 'here it is --mode'],
    [['-m', 'gpt-5'], 'here it is --model <id>'],
    [['--json'], 'here it is --output-format json'],
    [
      ['--api-key', 'sk-x'],
      'there is no such flag; keys come from the environment (ANTHROPIC_API_KEY',
    ],
    [
      ['--settings', 'x.json'],
      'there is no such flag; settings are read from $AGENT_HOME/settings.json',
    ],
    [['--no-color'], 'there is no such flag; NO_COLOR=1 turns colour off'],
    [
      ['--mode', 'acceptEdits'],
      'Unknown mode "acceptEdits": expected one of default, read-only, workspace-write, full-access, plan (for acceptEdits, use workspace-write)',
    ],
    [['--mode', 'bypassPermissions'], '(for bypassPermissions, use full-access)'],
  ])('another agent’s %j: what it is called here', async (args, message) => {
    const run = await runCli([...args, '-p', 'hi']);
    expectUserError(run, 2);
    expect(run.stderr).toContain(message);
  });

  it('another agent’s mode in the settings file: named, with the mode here', async () => {
    const home = await scratch();
    await writeFile(
      join(home, 'settings.json'),
      JSON.stringify({ permissions: { defaultMode: 'acceptEdits' } }),
    );
    const run = await runCli(['-p', 'hi'], { env: cleanEnv({ AGENT_HOME: home }) });
    expectUserError(run, 1);
    expect(run.stderr).toContain(
      'permissions.defaultMode "acceptEdits" is another agent\'s name: here it is "workspace-write"',
    );
  });

  it.each([
    ['raed_file', 'unknown tool "raed_file": did you mean read_file?'],
    ['=-bsah', 'unknown tool "-bsah": did you mean -bash?'],
    ['read_file,wbe_fetch', 'unknown tool "wbe_fetch": did you mean web_fetch?'],
  ])('--tools %s: the nearest tool', async (list, message) => {
    const run = await runCli(
      list.startsWith('=') ? [`--tools${list}`, '-p', 'hi'] : ['--tools', list, '-p', 'hi'],
    );
    expectUserError(run, 2);
    expect(run.stderr).toContain(message);
  });

  it('a value that starts with "-" given apart: how to attach it, to that option', async () => {
    const run = await runCli(['--tools', '-bash', '-p', 'hi']);
    expectUserError(run, 2);
    expect(run.stderr).toContain(
      '--tools needs a value; one that starts with "-" must be attached: --tools=-x',
    );
  });

  it('an option nothing is near gets no guess', async () => {
    for (const typed of ['--frobnicate', '-x', '--zz']) {
      const run = await runCli([typed]);
      expectUserError(run, 2);
      expect(run.stderr).toContain(`Unknown option ${typed} (agent --help lists them)`);
      expect(run.stderr).not.toContain('did you mean');
    }
  });

  it('closestWord: within the limit, a known word comes back; beyond it, none', () => {
    const known = ['demo', 'trust', 'mcp', 'help', 'model', 'continue'];
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), (word) => {
        const found = closestWord(word, known);
        if (found === undefined) return;
        const limit = word.length <= 5 ? 1 : 2;
        const near = editDistance(word.toLowerCase(), found) <= limit;
        const prefix = word.length >= 3 && found.startsWith(word.toLowerCase());
        expect(near || prefix).toBe(true);
      }),
    );
    expect(closestWord('hi', known)).toBeUndefined();
    expect(closestWord('the', known)).toBeUndefined();
    expect(editDistance('dmeo', 'demo')).toBe(1);
  });
});

describe('--help of a command', () => {
  it.each([
    [['demo', '--help'], 'Usage: agent demo'],
    [['trust', '--help'], 'Usage: agent trust [list|revoke]'],
    [['trust', 'list', '--help'], 'Usage: agent trust [list|revoke]'],
    [['mcp', 'serve', '--help'], 'Usage: agent mcp serve'],
    [['mcp', '--help'], 'Usage: agent mcp serve'],
    [['mcp', 'login', '--help'], 'Usage: agent mcp login <server>'],
    [['mcp', 'login', 'docs', '--help'], 'Usage: agent mcp login <server>'],
    [['help'], 'Usage:\n  agent [options]'],
    [['--help'], 'Usage:\n  agent [options]'],
    // A command by its last word, or help itself: was a prompt (sent to the model at a terminal).
    [['help', 'serve'], 'Usage: agent mcp serve'],
    [['help', 'login'], 'Usage: agent mcp login <server>'],
    [['help', 'list'], 'Usage: agent trust [list|revoke]'],
    [['help', 'revoke'], 'Usage: agent trust [list|revoke]'],
    [['help', 'help'], 'Usage:\n  agent [options]'],
  ])('agent %s prints its own help', async (args, heading) => {
    const run = await runCli(args);
    expect(run.code).toBe(0);
    expect(run.stdout.startsWith(heading)).toBe(true);
    expect(run.stderr).toBe('');
  });
});

describe('agent --help', () => {
  it('says where the settings live and how to get a command’s own help', async () => {
    const run = await runCli(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('~/.agent/settings.json   your settings');
    expect(run.stdout).toContain('AGENT_HOME=<dir>');
    expect(run.stdout).toContain('agent <command> --help   the help of demo, trust and mcp serve');
  });
});

describe('keys', () => {
  it.each([
    ['anthropic', 'ANTHROPIC_API_KEY', 'console.anthropic.com'],
    ['openai', 'OPENAI_API_KEY', 'platform.openai.com'],
    ['google', 'GEMINI_API_KEY (or GOOGLE_API_KEY)', 'aistudio.google.com'],
  ])(
    '--provider %s without its key fails at start, naming the variable',
    async (provider, variable, page) => {
      const home = await scratch();
      const run = await runCli(['--provider', provider, '-p', 'hi'], {
        env: cleanEnv({ AGENT_HOME: home }),
      });
      expectUserError(run, 1);
      expect(run.stderr).toContain(`The provider ${provider} needs an API key: set ${variable}`);
      expect(run.stderr).toContain(page);
      expect(run.stderr).toContain('agent demo');
      // Nothing started: no sandbox line, no session kept.
      expect(run.stderr).not.toContain('bash:');
      expect(filesUnder(home).filter((name) => name.includes('sessions'))).toEqual([]);
    },
  );

  it('the provider of the settings file, without its key, fails the same way', async () => {
    const home = await scratch();
    await writeFile(join(home, 'settings.json'), JSON.stringify({ provider: 'google' }));
    const run = await runCli(['-p', 'hi'], { env: cleanEnv({ AGENT_HOME: home }) });
    expectUserError(run, 1);
    expect(run.stderr).toContain('The provider google needs an API key: set GEMINI_API_KEY');
  });

  it('an OpenAI-compatible server needs no key', async () => {
    const server = await refusingServer();
    const run = await runCli(['--base-url', `${server.url}/v1`, '--model', 'm', '-p', 'hi'], {
      env: cleanEnv({ AGENT_HOME: await scratch() }),
    });
    // It reached the server (which refuses everyone): the key check did not stop it first.
    expect(server.requests.length).toBeGreaterThan(0);
    expect(run.stderr).not.toContain('needs an API key');
  });

  it.each([
    ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', '', 'invalid x-api-key'],
    ['OPENAI_API_KEY', 'OPENAI_BASE_URL', '/v1', 'Incorrect API key provided'],
    ['GEMINI_API_KEY', 'GOOGLE_GEMINI_BASE_URL', '', 'API key not valid'],
  ])(
    'a wrong %s: the error names the variable whose key was refused',
    async (variable, baseVariable, path, vendorText) => {
      const server = await refusingServer();
      const run = await runCli(['-p', 'hi'], {
        env: cleanEnv({
          AGENT_HOME: await scratch(),
          [variable]: 'sk-wrong',
          [baseVariable]: `${server.url}${path}`,
        }),
      });
      expect(run.code).toBe(1);
      expect(server.requests.length).toBeGreaterThan(0);
      expect(run.stderr).toContain(vendorText);
      expect(run.stderr).toContain(`the key in ${variable} was refused: check it`);
      expect(run.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
      // Gemini's schema notes (a keyword it does not take, still checked) are not the user's business.
      expect(run.stderr).not.toContain('still enforced');
    },
  );
});

describe('a model named without a provider', () => {
  it.each([
    ['gpt-5', 'openai'],
    ['o3-mini', 'openai'],
    ['claude-haiku-4-5', 'anthropic'],
    ['gemini-2.5-pro', 'google'],
  ])('--model %s goes to %s though every vendor has a key', async (model, provider) => {
    const servers = {
      anthropic: await refusingServer(),
      openai: await refusingServer(),
      google: await refusingServer(),
    };
    const run = await runCli(['--model', model, '-p', 'hi'], {
      env: cleanEnv({
        AGENT_HOME: await scratch(),
        ANTHROPIC_API_KEY: 'sk-a',
        ANTHROPIC_BASE_URL: servers.anthropic.url,
        OPENAI_API_KEY: 'sk-o',
        OPENAI_BASE_URL: `${servers.openai.url}/v1`,
        GEMINI_API_KEY: 'sk-g',
        GOOGLE_GEMINI_BASE_URL: servers.google.url,
      }),
    });
    expect(run.code).toBe(1);
    for (const [name, server] of Object.entries(servers))
      expect(server.requests.length > 0, `${name} reached`).toBe(name === provider);
    expect(run.stderr).toContain(`the key in`);
  });

  it("a vendor's model without that vendor's key fails at start, naming the key", async () => {
    const home = await scratch();
    const run = await runCli(['--model', 'claude-sonnet-4-6', '-p', 'hi'], {
      env: cleanEnv({ AGENT_HOME: home, OPENAI_API_KEY: 'sk-o' }),
    });
    expectUserError(run, 1);
    expect(run.stderr).toContain(
      "The model claude-sonnet-4-6 is Anthropic's (--provider <name> sends it elsewhere), and needs an API key: set ANTHROPIC_API_KEY",
    );
    expect(run.stderr).not.toContain('bash:');
    expect(filesUnder(home).filter((name) => name.includes('sessions'))).toEqual([]);
  });

  it('the model of the settings file picks its provider too', async () => {
    const home = await scratch();
    await writeFile(join(home, 'settings.json'), JSON.stringify({ model: 'gemini-2.5-flash' }));
    const run = await runCli(['-p', 'hi'], {
      env: cleanEnv({ AGENT_HOME: home, ANTHROPIC_API_KEY: 'sk-a' }),
    });
    expectUserError(run, 1);
    expect(run.stderr).toContain("The model gemini-2.5-flash is Google's");
    expect(run.stderr).toContain('GEMINI_API_KEY');
  });

  it("with OPENAI_BASE_URL (a proxy of yours) another vendor's model goes there", async () => {
    const server = await refusingServer();
    const run = await runCli(['--model', 'claude-sonnet-4-6', '-p', 'hi'], {
      env: cleanEnv({
        AGENT_HOME: await scratch(),
        OPENAI_API_KEY: 'sk-o',
        OPENAI_BASE_URL: `${server.url}/v1`,
      }),
    });
    expect(
      server.requests.some(
        (url) => url.includes('/chat/completions') || url.includes('/responses'),
      ),
    ).toBe(true);
    expect(run.stderr).not.toContain('needs an API key');
  });
});

describe('behind a proxy', () => {
  it('HTTPS_PROXY without NODE_USE_ENV_PROXY: the failed connection says what Node needs; with it, the proxy is used', async () => {
    const connects: string[] = [];
    const proxy = createServer((_request, response) => {
      response.writeHead(502);
      response.end();
    });
    proxy.on('connect', (request, socket) => {
      connects.push(request.url ?? '');
      socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    cleanups.push(() => new Promise((resolve) => proxy.close(() => resolve())));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    // An HTTPS endpoint nothing listens on: direct or through the proxy, the connection fails.
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const env = {
      AGENT_HOME: await scratch(),
      ANTHROPIC_API_KEY: 'sk-test',
      ANTHROPIC_BASE_URL: `https://127.0.0.1:${port}`,
      HTTPS_PROXY: proxyUrl,
    };
    const direct = await runCli(['-p', 'hi'], { env: cleanEnv(env) });
    expect(direct.code).toBe(1);
    expect(direct.stderr).toContain(
      "HTTPS_PROXY is set, but Node's fetch uses it only with NODE_USE_ENV_PROXY=1",
    );
    expect(connects).toEqual([]);
    const proxied = await runCli(['-p', 'hi'], {
      env: cleanEnv({ ...env, NODE_USE_ENV_PROXY: '1' }),
    });
    expect(proxied.code).toBe(1);
    expect(connects).toContain(`127.0.0.1:${port}`);
    expect(proxied.stderr).not.toContain('NODE_USE_ENV_PROXY');
  });
});

describe('a key with a line break (read with $(cat key.txt))', () => {
  it('the refusal says so, precisely', async () => {
    const server = await refusingServer();
    const run = await runCli(['-p', 'hi'], {
      env: cleanEnv({
        AGENT_HOME: await scratch(),
        ANTHROPIC_API_KEY: 'sk-wrong\n',
        ANTHROPIC_BASE_URL: server.url,
      }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'the key in ANTHROPIC_API_KEY has a space or a line break around it',
    );
  });
});

describe('settings files an editor wrote', () => {
  it.each([
    ['{\n  "model": "x",\n}\n', 'line 3, column 1: a comma before the closing bracket'],
    ['{\n  // mine\n  "model": "x"\n}\n', 'line 2, column 3: a comment'],
    ['{ "model": "x" ', 'it ends before the object does, a missing } or ]'],
    ['{ "model":', 'it ends before the object does'],
    ['', 'it is empty (a settings file holds one JSON object: write {} or remove the file)'],
    ['  \n', 'it is empty'],
    ["{ 'model': 'x' }", 'line 1, column 3: a single quote, where JSON needs double quotes'],
    ['{ model: "x" }', 'line 1, column 3: a name without double quotes'],
    ['{ "provider": "openai",\n  model: "x" }', 'line 2, column 3: a name without double quotes'],
    ['{ "modle": "x" }', 'unknown setting "modle" — did you mean "model"?'],
    ['{ "permisions": {} }', 'unknown setting "permisions" — did you mean "permissions"?'],
    [
      '{ "defaultMode": "read-only" }',
      'unknown setting "defaultMode" — it belongs under "permissions"',
    ],
    ['{ "deny": ["bash"] }', 'unknown setting "deny" — it belongs under "permissions"'],
    [
      '{ "permissions": { "alow": [] } }',
      'unknown permission setting "alow" — did you mean "allow"?',
    ],
  ])('%j is refused with where and why', async (text, problem) => {
    const home = await scratch();
    await writeFile(join(home, 'settings.json'), text);
    const run = await runCli(['-p', 'hi'], { env: cleanEnv({ AGENT_HOME: home }) });
    expectUserError(run, 1);
    expect(run.stderr).toContain(`${join(home, 'settings.json')}: `);
    expect(run.stderr).toContain(problem);
    // The file is left as the user wrote it.
    expect(fs.readFileSync(join(home, 'settings.json'), 'utf8')).toBe(text);
  });

  it('a byte-order mark (Notepad) is read as the JSON after it', async () => {
    const dir = await scratch();
    const home = join(dir, 'home');
    await mkdir(home);
    await writeFile(
      join(home, 'settings.json'),
      '\uFEFF{ "permissions": { "deny": ["bash(rm *)"] } }',
    );
    const script = await writeScript(dir, [{ text: 'fine' }]);
    const run = await runCli(['--scripted', script, '-p', 'hi', '--cwd', dir], {
      env: cleanEnv({ AGENT_HOME: home }),
    });
    expect(run.stderr).not.toContain('settings.json');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('fine\n');
  });
});

describe('nothing to continue', () => {
  it('--continue and --resume say how to get a session', async () => {
    const dir = await scratch();
    const env = cleanEnv({ AGENT_HOME: join(dir, 'home') });
    const script = await writeScript(dir, [{ text: 'x' }]);
    const continued = await runCli(['--scripted', script, '--continue', '-p', 'hi', '--cwd', dir], {
      env,
    });
    expectUserError(continued, 1);
    expect(continued.stderr).toContain(`No saved session for ${dir} to continue`);
    expect(continued.stderr).toContain('start one here with agent');
    const resumed = await runCli(['--scripted', script, '--resume', 'no-such', '-p', 'hi'], {
      env,
    });
    expectUserError(resumed, 1);
    expect(resumed.stderr).toContain('agent --resume without a value lists');
  });
});

describe('a path that is not what the flag needs', () => {
  it('--cwd naming a missing folder or a file: said as such; agent trust records nothing', async () => {
    const dir = await scratch();
    const home = join(dir, 'home');
    const file = join(dir, 'notes.txt');
    await writeFile(file, 'x');
    const env = cleanEnv({ AGENT_HOME: home });
    for (const [cwd, problem] of [
      [join(dir, 'missing'), 'does not exist (--cwd must name an existing directory)'],
      [file, 'is not a directory'],
    ] as const) {
      for (const args of [
        ['trust', '--cwd', cwd],
        ['-p', 'hi', '--cwd', cwd],
        ['mcp', 'serve', '--cwd', cwd],
      ]) {
        const run = await runCli(args, { env });
        expectUserError(run, 1);
        expect(run.stderr).toContain(`The workspace ${cwd} ${problem}`);
      }
    }
    // Node's compile cache aside, nothing was written: no trusted folder, no session.
    expect(filesUnder(home).filter((name) => !name.startsWith('cache/'))).toEqual([]);
  });

  it.each(['--cwd', '--save', '--scripted', '--resume', '--mcp-config', '--model'])(
    '%s "" (an unset variable): a usage error naming the flag',
    async (flag) => {
      const run = await runCli([flag, '', '-p', 'hi']);
      expectUserError(run, 2);
      expect(run.stderr).toContain(`${flag} was given an empty value (an unset shell variable?)`);
    },
  );

  it('--save naming a folder, or a file in a missing folder: refused before the run does anything', async () => {
    const dir = await scratch();
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'write_file', arguments: { path: 'made.txt', content: 'x' } }] },
      { text: 'done' },
    ]);
    const env = cleanEnv({ AGENT_HOME: join(dir, 'home') });
    for (const [save, problem] of [
      [dir, `--save ${dir} is a folder: name a file, e.g. --save ${join(dir, 'session.json')}`],
      [join(dir, 'no', 'such', 'x.json'), `the folder ${join(dir, 'no', 'such')} does not exist`],
    ] as const) {
      const run = await runCli(
        ['--scripted', script, '-p', 'go', '--mode', 'full-access', '--cwd', dir, '--save', save],
        { env },
      );
      expectUserError(run, 1);
      expect(run.stderr).toContain(problem);
      expect(run.stdout).toBe('');
      expect(fs.existsSync(join(dir, 'made.txt'))).toBe(false);
    }
  });
});

describe('a current folder that was deleted', () => {
  it('is said as such, with what to do, without a stack', async () => {
    const dir = await scratch();
    const gone = join(dir, 'gone');
    await mkdir(gone);
    // A shell that stands in a folder someone removed: the child inherits the dead cwd.
    const run = await runProcess(
      'sh',
      ['-c', `cd '${gone}' && rmdir '${gone}' && exec '${process.execPath}' '${cliPath}' -p hi`],
      { cwd: dir, env: cleanEnv({ AGENT_HOME: join(dir, 'home') }) },
    );
    expectUserError(run, 1);
    expect(run.stderr).toContain('the current folder no longer exists');
    expect(run.stderr).toContain('pass --cwd <dir>');
  });
});

describe('started by habit in the home directory or /', () => {
  it('says the workspace is all of it and how to start in a project; a project folder gets no warning', async () => {
    const dir = await scratch();
    const home = join(dir, 'home');
    const project = join(home, 'project');
    await mkdir(project, { recursive: true });
    const script = await writeScript(dir, [{ text: 'ok' }, { text: 'ok' }, { text: 'ok' }]);
    const env = cleanEnv({ HOME: home, AGENT_HOME: join(dir, 'agent-home') });
    const run = (cwd: string) => runCli(['--scripted', script, '-p', 'hi'], { cwd, env });
    const inHome = await run(home);
    expect(inHome.code).toBe(0);
    expect(inHome.stderr).toContain(`warning: the workspace is your home directory (${home})`);
    expect(inHome.stderr).toContain('Start agent in a project folder (cd into it, or --cwd <dir>)');
    const inRoot = await run('/');
    expect(inRoot.code).toBe(0);
    expect(inRoot.stderr).toContain('warning: the workspace is /, the whole file system');
    const inProject = await run(project);
    expect(inProject.code).toBe(0);
    expect(inProject.stderr).not.toContain('warning: the workspace is');
  });
});

describe('after the demo', () => {
  it('the next step names the CLI as it was run here (no agent on the PATH of a clone)', async () => {
    const run = await runCli(['demo']);
    expect(run.code).toBe(0);
    const last = run.stdout.trimEnd().split('\n').at(-1) ?? '';
    expect(last).toContain('export ANTHROPIC_API_KEY=');
    // runCli starts it as `node <…>/dist/main.js` from apps/cli.
    expect(last).toContain('`node dist/main.js --help`');
    expect(last).not.toContain('`agent --help`');
  });
});

describe('a home the CLI cannot write', () => {
  it('as a user without write permission: agent trust says what to do; a run works and says it is not kept', async () => {
    if (process.getuid?.() !== 0) return expect(process.getuid?.()).not.toBe(0);
    const dir = await scratch();
    const home = join(dir, 'home');
    const workspace = join(dir, 'workspace');
    await mkdir(home);
    await mkdir(workspace);
    fs.chmodSync(dir, 0o755);
    fs.chmodSync(home, 0o755);
    fs.chownSync(workspace, 65534, 65534);
    const node = join(dir, 'node');
    linkNode(node);
    const script = await writeScript(dir, [{ text: 'still answered' }]);
    fs.chmodSync(script, 0o644);
    const nobody = (args: string[]) =>
      runProcess(
        'setpriv',
        ['--reuid=65534', '--regid=65534', '--clear-groups', node, cliPathForAnyUser(), ...args],
        {
          cwd: workspace,
          env: cleanEnv({ HOME: home, AGENT_HOME: '' }),
        },
      );
    const trusted = await nobody(['trust']);
    expectUserError(trusted, 1);
    expect(trusted.stderr).toContain(
      `cannot write ${join(home, '.agent')}: permission denied (EACCES)`,
    );
    expect(trusted.stderr).toContain('set AGENT_HOME to a folder you can write');
    const ran = await nobody(['--scripted', script, '-p', 'hi']);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe('still answered\n');
    expect(ran.stderr).toContain(
      'warning: this session will not be kept, so --continue and --resume will not find it',
    );
    // Said once, not again for the journal.
    expect(ran.stderr).not.toContain('not journaled');
    expect(await readdir(home)).toEqual([]);
  });

  it('read-only (bubblewrap binds it so): the same, with EROFS', async (context) => {
    skipWithout('bwrap')(context);
    const dir = await scratch();
    const home = join(dir, 'home');
    await mkdir(home);
    const script = await writeScript(dir, [{ text: 'still answered' }]);
    const readOnly = (args: string[]) =>
      runProcess(
        'bwrap',
        ['--dev-bind', '/', '/', '--ro-bind', home, home, process.execPath, cliPath, ...args],
        { cwd: dir, env: cleanEnv({ HOME: home, AGENT_HOME: join(home, '.agent') }) },
      );
    const trusted = await readOnly(['trust']);
    expectUserError(trusted, 1);
    // Node's recursive mkdir reports a read-only file system as ENOENT.
    expect(trusted.stderr).toMatch(
      /the file system is read-only \(EROFS\)|a read-only file system, or a folder above it/,
    );
    expect(trusted.stderr).toContain('set AGENT_HOME to a folder you can write');
    const ran = await readOnly(['--scripted', script, '-p', 'hi', '--sandbox', 'off']);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe('still answered\n');
    expect(ran.stderr).toContain('this session will not be kept');
    expect(await readdir(home)).toEqual([]);
  });
});

describe('stdin left open', () => {
  it('after a quiet while, -p says it waits for stdin and how to go without; the piped text still counts', async () => {
    const dir = await scratch();
    const script = await writeScript(dir, [{ text: 'read it' }]);
    const child = spawn(
      process.execPath,
      [cliPath, '--scripted', script, '-p', 'explain', '--cwd', dir, '--output-format', 'json'],
      {
        env: cleanEnv({ AGENT_HOME: join(dir, 'home') }),
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    const waiting = new Promise<void>((resolve) => {
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
        if (stderr.includes('waiting for stdin')) resolve();
      });
    });
    await waiting;
    expect(stderr).toContain('if nothing is meant to come, run it with < /dev/null');
    child.stdin.end('late data\n');
    const [code] = (await once(child, 'close')) as [number];
    expect(code).toBe(0);
    const sessionId = (JSON.parse(stdout) as { sessionId: string }).sessionId;
    const sessions = join(dir, 'home', 'sessions');
    const [folder = ''] = await readdir(sessions);
    const file = (await readdir(join(sessions, folder))).find((name) =>
      name.endsWith(`${sessionId}.json`),
    );
    const saved = fs.readFileSync(join(sessions, folder, file ?? 'missing'), 'utf8');
    expect(saved).toContain('late data');
  });
});

/** A server that refuses every key as the vendor does (status and body), recording requests. */
async function refusingServer(): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? '');
    request.resume();
    request.on('end', () => {
      const url = request.url ?? '';
      response.setHeader('content-type', 'application/json');
      if (url.includes('/messages')) {
        response.writeHead(401);
        response.end(
          JSON.stringify({
            type: 'error',
            error: { type: 'authentication_error', message: 'invalid x-api-key' },
          }),
        );
      } else if (url.toLowerCase().includes('generatecontent')) {
        // Gemini answers a bad key with 400, not 401.
        response.writeHead(400);
        response.end(
          JSON.stringify({
            error: {
              code: 400,
              message: 'API key not valid. Please pass a valid API key.',
              status: 'INVALID_ARGUMENT',
            },
          }),
        );
      } else {
        response.writeHead(401);
        response.end(
          JSON.stringify({
            error: {
              message: 'Incorrect API key provided: sk-wrong.',
              type: 'invalid_request_error',
              code: 'invalid_api_key',
            },
          }),
        );
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

/** Every file (not folder) under `dir`, as paths relative to it. */
function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1));
}

/** Node where another user can run it (this one may live under /root). */
function linkNode(path: string): void {
  nodeForAnyUser(path);
}

function runProcess(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
